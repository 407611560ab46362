#!/usr/bin/env node
import { readFileSync } from "node:fs";

// `--version` alone answers without loading the command tree
if (process.argv.length === 3 && (process.argv[2] === "--version" || process.argv[2] === "-V")) {
  const { version } = JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8"));
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
  const { run } = await import("../dist/main.js");
  process.exitCode = await run(process.argv);
}
