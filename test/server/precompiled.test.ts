/**
 * Precompiled queries on SQLite run straight on their statement when no transaction holds the
 * connection; during one they wait their turn, so that they never read what another request
 * has written but not committed (a revocation that rolls back, an event that is refused).
 */
import { rm } from "node:fs/promises";
import { afterAll, beforeAll, expect, it } from "vitest";
import { openStore, type Store } from "../../src/server/store/database.js";
import { type EventRow, findEvent, insertEvent } from "../../src/server/store/events-repo.js";
import { migrateToLatest } from "../../src/server/store/migrator.js";
import { makeDataDir } from "../helpers/server.js";

let dataDir: string;
let store: Store;

beforeAll(async () => {
  dataDir = await makeDataDir();
  store = await openStore({ dataDir });
  await migrateToLatest(store.db, store.dialect);
});
afterAll(async () => {
  await store?.close();
  await rm(dataDir, { recursive: true, force: true });
});

const event = (code: string): EventRow => ({
  code_key: code.toLowerCase(),
  code,
  name: "x",
  description: null,
  type: null,
  starts_at: "2030-01-01T10:00:00.000Z",
  ends_at: null,
  all_day: null,
  location: null,
  organizer: null,
  attendees: null,
  tags: null,
  custom_fields: null,
  created_at: "2030-01-01T00:00:00.000Z",
  updated_at: "2030-01-01T00:00:00.000Z",
  created_by: "admin",
  import_id: null,
  version: 1,
});

it("reads what was committed, at once", async () => {
  await insertEvent(store.db, event("P1"));
  expect(await findEvent(store.db, "p1")).toMatchObject({ code: "P1" });
});

it("waits for an open transaction to end instead of reading inside it", async () => {
  let release = () => {};
  const held = new Promise<void>((resolve) => {
    release = resolve;
  });
  let inserted = () => {};
  const insertDone = new Promise<void>((resolve) => {
    inserted = resolve;
  });
  const transaction = store.db.transaction().execute(async (trx) => {
    await insertEvent(trx, event("P2"));
    inserted();
    await held;
  });
  await insertDone;
  let seen: EventRow | undefined | "pending" = "pending";
  const read = findEvent(store.db, "P2").then((row) => {
    seen = row;
  });
  await new Promise((resolve) => setTimeout(resolve, 50));
  // inside the transaction the row is there, uncommitted: a read must not have returned it
  expect(seen).toBe("pending");
  release();
  await transaction;
  await read;
  expect(seen).toMatchObject({ code: "P2" });
});
