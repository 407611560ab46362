// 12. The audit trail's cost: audited writes (a User update, a login) against the same writes with
// audit() switched off (a switch lib/audit-switch.mjs adds as the bench loads the sources; the product
// has none), in-process through app.inject(); see bench/audit.mts.
import { mkdtemp, rm } from "node:fs/promises";
import { join } from "node:path";
import { ROOT } from "../lib/config.mjs";
import { run } from "../lib/processes.mjs";
import { ms2, progress, ratio, table, verdict } from "../lib/report.mjs";

const AUDIT_SCRIPT = join(ROOT, "bench", "audit.mts");

export async function measureAudit({ base }, dir) {
  const workDir = await mkdtemp(join(dir, "audit-"));
  progress("audit: two apps in-process from src/ (tsx), one with audit() switched off");
  let data;
  try {
    const result = await run(["--import", "tsx", AUDIT_SCRIPT, workDir], { env: base, forwardStderr: true });
    data = JSON.parse(result.stdout.trim().split("\n").pop());
  } finally {
    await rm(workDir, { recursive: true, force: true });
  }
  console.log(
    `\n12. Audit trail: audited writes against the same writes with audit() switched off (a switch the bench adds to\n` +
      `   the sources it loads; the product has none), through app.inject() (in-process, whole Fastify pipeline, no\n` +
      `   socket), sequential, the two apps alternating A B B A;\n` +
      `   ${data.records.audited} audit records written by the audited app, ${data.records.unaudited} by the other`,
  );
  const rows = [
    ["User update  PUT /Resources/{id}", data.updates],
    ["login        POST /auth/login", data.logins],
  ].map(([label, m]) => [
    `${label} (${m.count} each)`,
    ms2(m.audited),
    ms2(m.unaudited),
    `${ratio(m.audited / m.unaudited)}  ${verdict(`audit: ${label.split("  ")[0]} audited / off`, m.audited / m.unaudited, "<=", 1.15)}`,
  ]);
  console.log(table(["write", "audited", "auditing off", "ratio"], rows, [1, 2]));
}
