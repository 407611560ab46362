import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { execa } from "execa";
import { describe, expect, it } from "vitest";
import { BIN, json, MODES, show, useSession } from "../helpers/cli.js";

/**
 * Issue 32, done when: a CI script that provisions users from a CSV as an HR system exports it,
 * runs twice, and cleans up by filter, passes unchanged on every run, the binary driven by bash
 * as a CI job drives it. Its first run dies before its clean-up (SKIP_CLEANUP), as a cancelled
 * job does: the next runs meet the users it left.
 */

const CSV = `userName,email,givenName,familyName,role,externalId
ci.ada,ada@example.com,Ada,Lovelace,member,ci-1
ci.grace,grace@example.com,Grace,Hopper,support,ci-2
ci.alan,alan@example.com,Alan,Turing,member,ci-3
`;

const SCRIPT = `
set -euo pipefail
bizctl() { node "$BIZCTL_BIN" "$@"; }
selected='externalId sw "ci-"'

# provision: the users exist afterwards, whatever an earlier run left
bizctl users import "$USERS_CSV" --on-conflict update > import.json
jq -e '.failed == 0 and .read == 3' import.json > /dev/null
test "$(bizctl users list --filter "$selected" --all | jq length)" = 3

# an export that matched nothing imports as nothing, and passes
bizctl users export --filter 'userName eq "nobody"' -o ndjson | bizctl users import - > /dev/null

if [ -n "\${SKIP_CLEANUP:-}" ]; then exit 0; fi

# clean up by filter: look first, then act without a terminal
test "$(bizctl users delete --filter "$selected" --dry-run | jq .matched)" = 3
bizctl users disable --filter "$selected" --yes > /dev/null
bizctl users delete --filter "$selected" --yes | jq -e '.deleted == 3 and .failed == 0' > /dev/null
test "$(bizctl users list --filter "$selected" --all | jq length)" = 0
# the server keeps deleted users (and their names) for a while: a script that makes them again
# next run purges them, which frees their names at once
bizctl users deleted --json | jq -r '.[] | select(.externalId // "" | startswith("ci-")) | .id' |
  while read -r id; do bizctl users purge "$id" --yes > /dev/null; done
test "$(bizctl users deleted --json | jq '[.[] | select(.externalId // "" | startswith("ci-"))] | length')" = 0
`;

describe.each(MODES)("a CI script that provisions and cleans up users (%s)", (mode) => {
  const s = useSession(mode);

  async function runScript(extra: Record<string, string> = {}) {
    const dir = s.sandbox.root;
    const csv = join(dir, "hr-export.csv");
    await writeFile(csv, CSV);
    const result = await execa("bash", ["-c", SCRIPT], {
      cwd: dir,
      reject: false,
      extendEnv: false,
      env: { ...s.env, BIZCTL_BIN: BIN, USERS_CSV: csv, ...extra },
      stdin: "ignore",
      timeout: 120_000,
    });
    return { exitCode: result.exitCode ?? -1, stdout: String(result.stdout), stderr: String(result.stderr), args: [] };
  }

  it("passes unchanged on every run, after a run that never cleaned up too", async () => {
    const dying = await runScript({ SKIP_CLEANUP: "1" });
    expect(dying.exitCode, show(dying)).toBe(0);
    for (const run of [1, 2]) {
      const result = await runScript();
      expect(result.exitCode, `run ${run}: ${show(result)}`).toBe(0);
    }
    const left = await s.run(["users", "list", "--filter", 'externalId sw "ci-"', "--json"]);
    expect(json(left)).toEqual([]);
    const admin = await s.run(["users", "list", "--filter", 'userName eq "admin"', "--json"]);
    expect(json(admin)).toHaveLength(1);
  }, 240_000);
});
