// Preloaded into a measured CLI run (`node --import ./max-rss.mjs bin/bizctl.js …`): reports the
// process's peak resident set size on stderr as it exits, which a child process cannot tell its parent.
import { writeSync } from "node:fs";

process.on("exit", () => writeSync(2, `\nBENCH_MAX_RSS_KB=${process.resourceUsage().maxRSS}\n`));
