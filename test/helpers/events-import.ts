/**
 * What the `events import` suites share: the three stores they run on, a session on each (the
 * command in this process; a real `server start` for the remote ones), and the events they write.
 */
import { type InProcessSession, inProcessSession } from "./in-process.js";
import { createTestDatabase, TEST_SECRET_KEY } from "./postgres.js";

export type ImportStore = "sqlite embedded" | "sqlite remote" | "postgresql remote";
export const IMPORT_STORES: ImportStore[] = ["sqlite embedded", "sqlite remote", "postgresql remote"];

/** A session on `store`; on PostgreSQL, a database of its own, `server init` and `server start` on it. */
export async function importSession(store: ImportStore): Promise<InProcessSession> {
  if (store !== "postgresql remote") return inProcessSession(store === "sqlite embedded" ? "embedded" : "remote");
  const database = await createTestDatabase();
  return inProcessSession("remote", {
    storage: { args: ["--database", database.url], env: { BIZCTL_SECRET_KEY: TEST_SECRET_KEY }, drop: database.drop },
  });
}

export const event = (code: string, name = `Event ${code}`) => ({ code, name, startsAt: "2027-05-01T09:00:00Z" });

/** NDJSON of these lines: a string as it is (a malformed line), anything else as JSON. */
export const ndjson = (...lines: unknown[]) =>
  lines.map((l) => (typeof l === "string" ? l : JSON.stringify(l))).join("\n");
