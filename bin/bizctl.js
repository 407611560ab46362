#!/usr/bin/env node
import { run } from "../dist/main.js";

process.on("SIGINT", () => {
  process.exitCode = 130;
  process.exit();
});
process.exitCode = await run(process.argv);
