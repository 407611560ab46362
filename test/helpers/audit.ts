/** What the audit tests share: the record's type, from the contract, and a wait for one to appear. */
import type { Static } from "@sinclair/typebox";
import type { AuditRecord as AuditRecordSchema } from "../../src/contract/audit.js";

export type AuditRecord = Static<typeof AuditRecordSchema>;

/** Polls `probe` every 200 ms until it returns a value, failing after `timeoutMs` with `what`. */
export async function waitFor<T>(probe: () => Promise<T | undefined>, what: string, timeoutMs = 20_000): Promise<T> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((done) => setTimeout(done, 200));
  }
}
