// Module hooks for bench/audit.mts (registered with node:module's register(), after tsx's): they
// load src/server/services/audit.ts with a switch the product does not have, so that one process
// can time the same writes with and without their audit records. In the module's source the real
// audit() is renamed and a stand-in takes its name, which every caller in the module and outside
// it then reaches:
//
//   setAuditRecording(false)  the stand-in returns at once: no record is built or written
//   setAuditRecording(true)   the stand-in calls the real audit() (the default)
//
// Nothing else of the module changes; it is compiled by esbuild as tsx compiles every other one
// (tsx still resolves its imports). A source in which the real audit() is not found fails the
// measure rather than measure nothing.
import { readFile } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import { transform } from "esbuild";

const AUDIT_MODULE = /\/src\/server\/services\/audit\.ts$/;
const REAL = "export async function audit(";

const STAND_IN = `
let recording = true;
export function setAuditRecording(on: boolean): void {
  recording = on;
}
export async function audit(...args: Parameters<typeof recordedAudit>): Promise<void> {
  if (recording) return recordedAudit(...args);
}
`;

export async function load(url, context, nextLoad) {
  if (!url.startsWith("file:") || !AUDIT_MODULE.test(new URL(url).pathname)) return nextLoad(url, context);
  const file = fileURLToPath(url);
  const source = await readFile(file, "utf8");
  if (!source.includes(REAL)) {
    throw new Error(`bench: ${file} no longer declares \`${REAL}…\`: update bench/lib/audit-switch.mjs`);
  }
  const { code } = await transform(source.replace(REAL, "async function recordedAudit(") + STAND_IN, {
    loader: "ts",
    format: "esm",
    target: "node20",
    sourcefile: file,
    sourcemap: "inline",
  });
  return { format: "module", source: code, shortCircuit: true };
}
