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
 * Modules that a dependency requires when it loads, for work bizctl never or seldom asks of it.
 * Each is handed a stand-in that requires the real module at its first use, so that a command
 * does not parse and run it at every start; what uses it still works, and pays for it then.
 *   - undici's Client requires its HTTP/2 half, which loads node:http2 (with tls and the HTTP
 *     server it builds on): 14 ms of every remote command, for a protocol we never ask for (no
 *     `allowH2`); a connection that negotiates h2 still works.
 *   - @fastify/swagger requires yaml (290 KB of source) for a YAML document; we serve JSON.
 *   - @fastify/rate-limit requires ip-address to key IPv6 clients by subnet: on the first
 *     request from one, not at every embedded command.
 */
const ON_DEMAND = [
  {
    importer: `${sep}undici${sep}lib${sep}dispatcher${sep}client.js`,
    module: "./client-h2.js",
    standIn: "module.exports = function connectH2(...args) { return load()(...args); };",
  },
  {
    importer: `${sep}@fastify${sep}swagger${sep}`,
    module: "yaml",
    standIn:
      "module.exports = { parse: (...args) => load().parse(...args), stringify: (...args) => load().stringify(...args) };",
  },
  {
    importer: `${sep}@fastify${sep}rate-limit${sep}index.js`,
    module: "ip-address",
    // a constructor that returns the real instance: `new Address6(ip)` works unchanged
    standIn: "module.exports = { Address6: function Address6(...args) { return new (load().Address6)(...args); } };",
  },
];

const onDemand = {
  name: "on-demand",
  setup(esbuild) {
    for (const [index, { importer, module }] of ON_DEMAND.entries()) {
      const filter = new RegExp(`^${module.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&")}$`);
      esbuild.onResolve({ filter }, (args) =>
        args.namespace === "file" && args.importer.includes(importer)
          ? { path: join(dirname(args.importer), `${index}.on-demand.js`), namespace: "on-demand" }
          : undefined,
      );
    }
    esbuild.onLoad({ filter: /.*/, namespace: "on-demand" }, (args) => {
      const { module, standIn } = ON_DEMAND[Number(args.path.match(/(\d+)\.on-demand\.js$/)[1])];
      return {
        contents: `let real; const load = () => (real ??= require(${JSON.stringify(module)}));\n${standIn}`,
        resolveDir: dirname(args.path),
        loader: "js",
      };
    });
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
    plugins: [onDemand],
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
