#!/usr/bin/env node
import { readFileSync } from "node:fs";

// `--version` alone answers without loading the command tree
if (process.argv.length === 3 && (process.argv[2] === "--version" || process.argv[2] === "-V")) {
  const { version } = JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8"));
  process.stdout.write(`${version}\n`);
} else {
  process.on("SIGINT", () => {
    process.exitCode = 130;
    process.exit();
  });
  const { run } = await import("../dist/main.js");
  process.exitCode = await run(process.argv);
}
