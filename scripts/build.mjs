// Bundles the CLI (and, in lazily loaded chunks, the server) so that start-up reads few files.
import { readFileSync, rmSync } from "node:fs";
import { build } from "esbuild";

const pkg = JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8"));
rmSync(new URL("../dist", import.meta.url), { recursive: true, force: true });

await build({
  entryPoints: ["src/main.ts"],
  outdir: "dist",
  bundle: true,
  splitting: true,
  format: "esm",
  platform: "node",
  target: "node20.19",
  sourcemap: "linked",
  chunkNames: "chunks/[name]-[hash]",
  // native addons and drivers stay in node_modules; pino's worker transports need their files
  external: ["better-sqlite3", "argon2", "pg", "pg-native", "pino", "thread-stream"],
  define: { BIZCTL_VERSION: JSON.stringify(pkg.version) },
  banner: {
    js: "import { createRequire as __bizctlRequire } from 'node:module'; const require = __bizctlRequire(import.meta.url);",
  },
  logLevel: "warning",
});
