// Writes completions/ from the command tree, through the built binary (`npm run completions`);
// a test fails when the committed files are stale.
import { execFileSync } from "node:child_process";
import { writeFileSync } from "node:fs";

const bin = new URL("../bin/bizctl.js", import.meta.url).pathname;
for (const [shell, file] of [
  ["bash", "bizctl.bash"],
  ["zsh", "_bizctl"],
  ["fish", "bizctl.fish"],
]) {
  writeFileSync(
    new URL(`../completions/${file}`, import.meta.url),
    execFileSync(process.execPath, [bin, "completion", shell]),
  );
  console.log(`completions/${file}`);
}
