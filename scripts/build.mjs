// Bundles the CLI (and, in lazily loaded chunks, the server) so that start-up reads few files.
// It builds beside dist/ and swaps the folders, so that a process running from dist/ meanwhile
// (a test, a server) never sees it half-written.
import { readFileSync, renameSync, rmSync } from "node:fs";
import { dirname, join, sep } from "node:path";
import { build } from "esbuild";

const root = new URL("../", import.meta.url);
const pkg = JSON.parse(readFileSync(new URL("package.json", root), "utf8"));
const next = new URL(`dist.next-${process.pid}/`, root);
const old = new URL(`dist.old-${process.pid}/`, root);
const dist = new URL("dist/", root);

/**
 * undici's Client requires its HTTP/2 half when it loads, and that half loads node:http2 (with
 * tls and the HTTP server it builds on): 14 ms of every remote command's start-up, for a protocol
 * we never ask for (no `allowH2`). This hands the Client a stand-in that loads the real thing on
 * its first call: a connection that negotiated h2 still works, it only pays for it then.
 */
const undiciHttp2OnDemand = {
  name: "undici-http2-on-demand",
  setup(esbuild) {
    const client = `${sep}undici${sep}lib${sep}dispatcher${sep}client.js`;
    esbuild.onResolve({ filter: /^\.\/client-h2\.js$/ }, (args) =>
      args.namespace === "file" && args.importer.endsWith(client)
        ? { path: join(dirname(args.importer), "client-h2.on-demand.js"), namespace: "undici-http2-on-demand" }
        : undefined,
    );
    esbuild.onLoad({ filter: /.*/, namespace: "undici-http2-on-demand" }, (args) => ({
      contents: 'module.exports = function connectH2(...args) { return require("./client-h2.js")(...args); };',
      resolveDir: dirname(args.path),
      loader: "js",
    }));
  },
};

try {
  await build({
    entryPoints: [new URL("src/main.ts", root).pathname],
    outdir: next.pathname,
    bundle: true,
    splitting: true,
    format: "esm",
    platform: "node",
    target: "node20.19",
    sourcemap: "linked",
    // every command parses and compiles the chunks it loads: without comments and indentation
    // there is a third less to read. Comments are also where packages put non-ASCII text (an
    // author's name, a dash), and one such character makes V8 hold the whole chunk as a two-byte
    // string. Identifiers stay unminified (names in stack traces; the source maps map the rest)
    // and the licence comments go to .LEGAL.txt files beside their chunks.
    minifyWhitespace: true,
    legalComments: "linked",
    chunkNames: "chunks/[name]-[hash]",
    // native addons and drivers stay in node_modules; pino's worker transports need their files
    external: ["better-sqlite3", "argon2", "pg", "pg-native", "pino", "thread-stream"],
    define: { BIZCTL_VERSION: JSON.stringify(pkg.version) },
    banner: {
      js: "import { createRequire as __bizctlRequire } from 'node:module'; const require = __bizctlRequire(import.meta.url);",
    },
    plugins: [undiciHttp2OnDemand],
    logLevel: "warning",
  });
  try {
    renameSync(dist, old);
  } catch {
    // no previous build
  }
  renameSync(next, dist);
} finally {
  rmSync(next, { recursive: true, force: true });
  rmSync(old, { recursive: true, force: true });
}
