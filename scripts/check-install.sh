#!/usr/bin/env bash
# The README's Deployment section, run as written on a clone where `npm ci` has run (its first
# line; .ci/run does it): pack, install the tarball globally, init a data dir, start the server,
# then log in to it with the installed CLI. The README's lines are read from README.md and compared
# with the ones below, so that the section cannot drift from what this script proved. The install
# goes into a temporary prefix (npm's own `NPM_CONFIG_PREFIX`) and /var/lib/bizctl becomes a
# temporary directory; the server listens on an ephemeral port (`BIZCTL_PORT=0`).
set -euo pipefail
cd "$(dirname "$0")/.."

expected=(
  'npm ci'
  'npm pack'
  'npm install -g ./bizctl-0.1.0.tgz'
  'export BIZCTL_DATA_DIR=/var/lib/bizctl'
  'bizctl server init --admin-user admin --admin-email it@example.com'
  'BIZCTL_PUBLIC_URL=https://api.example.com bizctl server start --trust-proxy 127.0.0.1,::1'
)
# the first ```sh block under "## Deployment", comments and blank lines removed
mapfile -t readme < <(awk '/^## Deployment$/{s=1;next} s&&/^## /{exit} s&&/^```sh$/{b=1;next} b&&/^```$/{exit} b' README.md |
  sed -E 's/[[:space:]]+#.*$//; s/[[:space:]]+$//' | grep -v '^$')
if [ "$(printf '%s\n' "${readme[@]}")" != "$(printf '%s\n' "${expected[@]}")" ]; then
  echo "README.md's Deployment commands differ from the ones scripts/check-install.sh runs:" >&2
  diff <(printf '%s\n' "${expected[@]}") <(printf '%s\n' "${readme[@]}") >&2 || true
  exit 1
fi

tmp=$(mktemp -d)
server=
cleanup() {
  if [ -n "$server" ]; then
    # the server is the child of the background subshell that ran the README's line
    pkill -TERM -P "$server" 2>/dev/null || true
    wait "$server" 2>/dev/null || true
  fi
  rm -rf "$tmp" bizctl-0.1.0.tgz
}
trap cleanup EXIT
export NPM_CONFIG_PREFIX="$tmp/prefix" PATH="$tmp/prefix/bin:$PATH"
# from the cache `npm ci` filled where it can, quietly
export NPM_CONFIG_PREFER_OFFLINE=true NPM_CONFIG_AUDIT=false NPM_CONFIG_FUND=false
# the CLI's profiles and caches in the sandbox too; npm keeps its cache (filled by `npm ci`)
export BIZCTL_CONFIG_DIR="$tmp/config" XDG_CACHE_HOME="$tmp/cache" BIZCTL_PORT=0 BIZCTL_HOST=127.0.0.1
run() { eval "${1//\/var\/lib\/bizctl/$tmp/data}"; }

started=$SECONDS
# ${expected[0]} (npm ci) is what .ci/run has just done
run "${expected[1]}"
tar -tzf bizctl-0.1.0.tgz >"$tmp/files"
grep -qx 'package/dist/bundles.json' "$tmp/files" || { echo "the tarball has no dist/" >&2; exit 1; }
run "${expected[2]}"
test "$(command -v bizctl)" = "$tmp/prefix/bin/bizctl"
bizctl --version
run "${expected[3]}"
otp=$(run "${expected[4]}" 2>/dev/null | node -e 'process.stdout.write(JSON.parse(require("fs").readFileSync(0, "utf8")).oneTimePassword)')
run "${expected[5]}" >/dev/null 2>"$tmp/server.log" &
server=$!
for _ in $(seq 100); do
  url=$(sed -nE 's/^bizctl server listening on (http:[^ ]+)$/\1/p' "$tmp/server.log")
  [ -n "$url" ] && break
  kill -0 "$server" 2>/dev/null || { cat "$tmp/server.log" >&2; exit 1; }
  sleep 0.2
done
[ -n "$url" ] || { echo "the installed server did not start:" >&2; cat "$tmp/server.log" >&2; exit 1; }

bizctl profile add prod --server "$url" --use >/dev/null
printf '%s\n%s\n' "$otp" 'Installed-and-Checked-42' | bizctl auth login --user admin --password-stdin >/dev/null
test "$(bizctl users get admin | node -e 'process.stdout.write(JSON.parse(require("fs").readFileSync(0, "utf8")).userName)')" = admin
echo "install from the packed tarball: server started and CLI logged in ($((SECONDS - started)) s)"
