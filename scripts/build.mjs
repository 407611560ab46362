// Bundles the CLI (and, in lazily loaded chunks, the server) so that start-up reads few files.
// It builds beside dist/ and swaps the folders, so that a process running from dist/ meanwhile
// (a test, a server) never sees it half-written.
import { readFileSync, renameSync, rmSync } from "node:fs";
import { build } from "esbuild";

const root = new URL("../", import.meta.url);
const pkg = JSON.parse(readFileSync(new URL("package.json", root), "utf8"));
const next = new URL(`dist.next-${process.pid}/`, root);
const old = new URL(`dist.old-${process.pid}/`, root);
const dist = new URL("dist/", root);

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
