/**
 * externalId (RFC 7643 section 3.1), the identifier a provisioning client gives a resource: unique
 * per resource type, filterable case-exactly, on SQLite and PostgreSQL; and the migration that
 * made it unique on a database whose resources already shared one.
 */
import { rm } from "node:fs/promises";
import { sql } from "kysely";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { openStore, type Store } from "../../src/server/store/database.js";
import { migrateTo, migrateToLatest } from "../../src/server/store/migrator.js";
import { createTestDatabase } from "../helpers/postgres.js";
import { DATABASES, useScimServer } from "../helpers/scim.js";
import { makeDataDir } from "../helpers/server.js";

describe.each(DATABASES)("externalId ($name)", ({ start }) => {
  const scim = useScimServer(start);
  const ids: Record<string, string> = {};
  beforeAll(async () => {
    ids.admin = scim.server.admin.id;
    for (const [key, body] of [
      ["user", { resourceType: "User", userName: "ext.one", externalId: "E-1" }],
      ["otherUser", { resourceType: "User", userName: "ext.two" }],
      ["device", { resourceType: "Device", externalId: "E-1" }],
    ] as const) {
      const created = await scim.call("POST", "/Resources", body, { "content-type": "application/json" });
      expect(created.status, created.text).toBe(201);
      ids[key] = created.json().id;
    }
  });

  const found = async (filter: string, types = "User") => {
    const answer = await scim.call("GET", `/Resources?resourcetypes=${types}&filter=${encodeURIComponent(filter)}`);
    expect(answer.status, answer.text).toBe(200);
    return answer
      .json()
      .Resources.map((r: { id: string }) => r.id)
      .sort();
  };

  it("is unique per type: a second User with it is 409 uniqueness naming externalId, a Device may have it", async () => {
    const again = await scim.call("POST", "/Resources", {
      resourceType: "User",
      userName: "ext.three",
      externalId: "E-1",
    });
    expect(again.status).toBe(409);
    expect(again.json()).toMatchObject({
      code: "conflict",
      scimType: "uniqueness",
      detail: "Another User has the externalId E-1.",
      errors: [{ path: "/externalId" }],
    });
    // a replacement that takes it is refused alike, and changes nothing
    const other = await scim.call("GET", `/Resources/${ids.otherUser}`);
    const taken = await scim.call("PUT", `/Resources/${ids.otherUser}`, { ...other.json(), externalId: "E-1" });
    expect(taken.status).toBe(409);
    expect((await scim.call("GET", `/Resources/${ids.otherUser}`)).headers.etag).toBe(other.headers.etag);
  });

  it.each([
    ['externalId eq "E-1"', ["user"]],
    ['externalId eq "e-1"', []],
    ['externalId co "-"', ["user"]],
    ["externalId pr", ["user"]],
    // the first admin has none either
    ['externalId ne "E-1"', ["admin", "otherUser"]],
    ["not (externalId pr)", ["admin", "otherUser"]],
    ["externalId eq null", ["admin", "otherUser"]],
  ])("filters case-exactly: %s", async (filter, expected) => {
    const users = await found(filter);
    expect(users).toEqual(expected.map((key) => ids[key]).sort());
  });

  it("filters across types too, and sorts", async () => {
    expect(await found('externalId eq "E-1"', "User,Device")).toEqual([ids.user, ids.device].sort());
    const sorted = await scim.call("GET", "/Resources?resourcetypes=User&sortBy=externalId&sortOrder=descending");
    expect(sorted.json().Resources.map((r: { id: string }) => r.id)).toContain(ids.user);
  });
});

describe.each([
  { name: "SQLite", dialect: "sqlite" as const },
  { name: "PostgreSQL", dialect: "postgres" as const },
])("the migration that makes externalId unique per type ($name)", ({ dialect }) => {
  let store: Store;
  let cleanup: () => Promise<void>;

  afterEach(async () => {
    await store?.close();
    await cleanup?.();
  });

  it("keeps it on the oldest resource of a type that shares it; the others keep it in their attributes", async () => {
    if (dialect === "sqlite") {
      const root = await makeDataDir();
      store = await openStore({ dataDir: root });
      cleanup = () => rm(root, { recursive: true, force: true });
    } else {
      const database = await createTestDatabase();
      const root = await makeDataDir();
      store = await openStore({ dataDir: root, databaseUrl: database.url });
      cleanup = async () => {
        await database.drop();
        await rm(root, { recursive: true, force: true });
      };
    }
    await migrateTo(store.db, dialect, "0022_last_failed_login");
    const rows = [
      ["b-newer", "User", "X", "2026-01-02"],
      ["a-older", "User", "X", "2026-01-01"],
      ["c-same-time", "User", "X", "2026-01-02"],
      ["device", "Device", "X", "2026-01-03"],
      ["alone", "User", "Y", "2026-01-03"],
    ];
    for (const [id, type, externalId, created] of rows) {
      const attributes = JSON.stringify({ externalId });
      await sql`insert into resources (id, resource_type, external_id, attributes, created_at, updated_at, version)
        values (${id}, ${type}, ${externalId}, ${attributes}, ${created}, ${created}, 1)`.execute(store.db);
    }
    expect((await migrateToLatest(store.db, dialect))[0]).toBe("0023_external_id_unique");
    const after = await store.db
      .selectFrom("resources")
      .select(["id", "external_id", "attributes"])
      .orderBy("id")
      .execute();
    expect(after.map((row) => [row.id, row.external_id])).toEqual([
      ["a-older", "X"],
      ["alone", "Y"],
      ["b-newer", null],
      ["c-same-time", null],
      ["device", "X"],
    ]);
    expect(after.every((row) => JSON.parse(row.attributes).externalId !== undefined)).toBe(true);
    // the database refuses a second one from now on
    await expect(sql`update resources set external_id = 'X' where id = 'b-newer'`.execute(store.db)).rejects.toThrow();
  });
});
