#!/usr/bin/env node
// CommonJS (bin/package.json): an ES module here would start Node's ESM loader at every command
const { readFileSync } = require("node:fs");
const { join } = require("node:path");

// `--version` alone answers without loading the command tree
if (process.argv.length === 3 && (process.argv[2] === "--version" || process.argv[2] === "-V")) {
  const { version } = JSON.parse(readFileSync(join(__dirname, "..", "package.json"), "utf8"));
  process.stdout.write(`${version}\n`);
} else {
  // a reader that stops early (`bizctl api GET /openapi.json | head`) closes the pipe: the rest of
  // the output is not wanted, which is no error to report, as with SIGPIPE in C programs
  process.stdout.on("error", (error) => {
    if (error.code !== "EPIPE") throw error;
    process.exit(process.exitCode ?? 0);
  });
  process.on("SIGINT", () => {
    process.exitCode = 130;
    process.exit();
  });
  let built;
  try {
    built = require("../dist/code-cache.cjs");
  } catch (error) {
    if (error.code !== "MODULE_NOT_FOUND") throw error;
    // a clone after `npm install` alone: the build runs at `npm pack`, not at install
    process.stderr.write(`bizctl is not built: run 'npm run build' in ${join(__dirname, "..")}\n`);
    process.exit(1);
  }
  const { loadBundle, saveCodeCaches } = built;
  loadBundle(join(__dirname, "..", "dist"), "cli")
    .run(process.argv)
    .then((exitCode) => {
      process.exitCode = exitCode;
      saveCodeCaches();
    });
}
