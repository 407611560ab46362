/**
 * A change of a resource writes only the value rows (what filters search) that changed; after
 * each change the rows stored are exactly those of its attributes, whatever the change: a scalar
 * replaced, removed or added, an element of a multi-valued attribute added or removed (the index
 * of each element after it moves), values repeated, a change that leaves everything as it was.
 * On SQLite and PostgreSQL.
 */
import { describe, expect, it } from "vitest";
import { flattenValues } from "../../src/server/store/resources-repo.js";
import { searchRows } from "../../src/server/store/user-search-text.js";
import { STORES } from "../helpers/postgres.js";
import { useTestServer } from "../helpers/server.js";

const PATCH_OP = "urn:ietf:params:scim:api:messages:2.0:PatchOp";

interface Scenario {
  name: string;
  /** the User's attributes at creation, besides its userName */
  start: Record<string, unknown>;
  /** the PATCH operations applied one after another, each checked */
  changes: Record<string, unknown>[];
}

const SCENARIOS: Scenario[] = [
  {
    name: "a scalar replaced, then removed, then added back",
    start: { title: "Engineer", nickName: "Al" },
    changes: [
      { op: "replace", path: "title", value: "Senior Engineer" },
      { op: "remove", path: "title" },
      { op: "add", path: "title", value: "Engineer" },
    ],
  },
  {
    name: "an element added to, and the first removed from, a multi-valued attribute",
    start: { emails: [{ value: "a@example.com", type: "work", primary: true }, { value: "b@example.com" }] },
    changes: [
      { op: "add", path: "emails", value: [{ value: "c@example.com", type: "home" }] },
      { op: "remove", path: 'emails[value eq "a@example.com"]' },
      { op: "replace", path: "emails", value: [{ value: "z@example.com", primary: true }] },
    ],
  },
  {
    name: "the same value twice in one attribute, then once",
    start: { phoneNumbers: [{ value: "555", type: "work" }] },
    changes: [
      { op: "add", path: "phoneNumbers", value: [{ value: "555", type: "work" }] },
      { op: "replace", path: "phoneNumbers", value: [{ value: "555", type: "home" }] },
    ],
  },
  {
    name: "a change that leaves the values as they were, then one of case only",
    start: { displayName: "Same Name" },
    changes: [
      { op: "replace", path: "displayName", value: "Same Name" },
      { op: "replace", path: "displayName", value: "SAME NAME" },
    ],
  },
];

type Row = { path: string; elem: number | null; kind: string; text_value: string | null; num_value: number | null };
const sorted = (rows: Row[]) =>
  rows.map((row) => JSON.stringify([row.path, row.elem, row.kind, row.text_value, row.num_value])).sort();

/** A User's rows: its flattened attributes and its search rows, both kept current by the diff. */
const expectedRows = (attributes: Record<string, unknown>) => {
  const values = flattenValues(attributes);
  return [...values, ...searchRows(values)];
};

describe.each(STORES)("value rows after a change on %s", (_store, start) => {
  const server = useTestServer({}, start);
  let counter = 0;

  const expectRowsOf = async (id: string) => {
    const db = server.app.services.store.db;
    const resource = await db
      .selectFrom("resources")
      .select("attributes")
      .where("id", "=", id)
      .executeTakeFirstOrThrow();
    const stored = await db
      .selectFrom("resource_values")
      .select(["path", "elem", "kind", "text_value", "num_value"])
      .where("resource_id", "=", id)
      .execute();
    expect(
      sorted(stored.map((row) => ({ ...row, num_value: row.num_value === null ? null : Number(row.num_value) }))),
    ).toEqual(sorted(expectedRows(JSON.parse(resource.attributes))));
  };

  it.each(SCENARIOS)("$name", async ({ start: attributes, changes }) => {
    const created = await server.call("POST", "/Users", {
      schemas: ["urn:ietf:params:scim:schemas:core:2.0:User"],
      userName: `values${++counter}-${crypto.randomUUID().slice(0, 6)}`,
      ...attributes,
    });
    expect(created.statusCode, created.body).toBe(201);
    const id = (created.json() as { id: string }).id;
    await expectRowsOf(id);
    for (const change of changes) {
      const patched = await server.call("PATCH", `/Users/${id}`, { schemas: [PATCH_OP], Operations: [change] });
      expect(patched.statusCode, patched.body).toBe(200);
      await expectRowsOf(id);
    }
  });
});
