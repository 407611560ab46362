/**
 * What the `events import` suites share: the three stores they run on, a session on each (the
 * command in this process; a real `server start` for the remote ones), and the events they write.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { type InProcessSession, inProcessSession, useStartedSession } from "./in-process.js";
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

/** The session on `store` of one describe block: started before its first test, closed after its last. */
export const useImportSession = (store: ImportStore): InProcessSession =>
  useStartedSession(() => importSession(store), 60_000);

/** Files written into the session's sandbox, and `events import` of one, answering JSON. */
export const importFiles = (s: InProcessSession) => ({
  file: (name: string, content: string) => {
    const path = join(s.sandbox.root, name);
    writeFileSync(path, content);
    return path;
  },
  importFile: (path: string, ...args: string[]) => s.run(["events", "import", path, "--json", ...args]),
  /** The events whose code starts with `prefix`, in code order, as `events export -o ndjson` writes them. */
  exported: async (prefix: string) => {
    const filter = `code sw ${JSON.stringify(prefix)}`;
    const result = await s.run(["events", "export", "-o", "ndjson", "--filter", filter, "--order", "code"]);
    if (result.exitCode !== 0) throw new Error(`events export exited ${result.exitCode}: ${result.stderr}`);
    return result.stdout
      .split("\n")
      .filter(Boolean)
      .map((line) => JSON.parse(line) as Record<string, unknown>);
  },
});

export const event = (code: string, name = `Event ${code}`) => ({ code, name, startsAt: "2027-05-01T09:00:00Z" });

/** NDJSON of these lines: a string as it is (a malformed line), anything else as JSON. */
export const ndjson = (...lines: unknown[]) =>
  lines.map((l) => (typeof l === "string" ? l : JSON.stringify(l))).join("\n");
