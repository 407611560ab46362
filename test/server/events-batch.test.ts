import { beforeAll, describe, expect, it } from "vitest";
import { type Call, type InjectResponse, problemOf, useTestServer } from "../helpers/server.js";

const BATCH = "/api/crm/v1/events/batch";
const IMPORTS = "/api/crm/v1/events/imports";
const event = (code: string) => ({ code, name: `Event ${code}`, startsAt: "2027-05-01T09:00:00Z" });

describe("POST /events/batch and atomic imports: the same rules as a single create", () => {
  const server = useTestServer();
  const admin = server.call;
  let member: Call;
  let support: Call;
  beforeAll(async () => {
    member = (await server.signIn({ userName: "mia.member", roles: ["member"] })).call;
    support = (await server.signIn({ userName: "sam.support", roles: ["support"] })).call;
  });

  const count = async () =>
    Number(
      (
        await server.app.services.store.db
          .selectFrom("events")
          .select((eb) => eb.fn.countAll<number>().as("n"))
          .executeTakeFirstOrThrow()
      ).n,
    );

  const refused: {
    name: string;
    call: () => Promise<InjectResponse>;
    status: number;
    code: string;
  }[] = [
    {
      name: "support may not write events",
      call: () => support("POST", BATCH, { items: [event("S-1")] }),
      status: 403,
      code: "forbidden",
    },
    {
      name: "no credential",
      call: () => server.anonymous("POST", BATCH, { items: [event("A-1")] }),
      status: 401,
      code: "token_missing",
    },
    {
      name: "more items than the limit",
      call: () => admin("POST", BATCH, { items: Array.from({ length: 1001 }, (_, i) => event(`BIG-${i}`)) }),
      status: 400,
      code: "validation_failed",
    },
    {
      name: "refs that do not match the items",
      call: () => admin("POST", BATCH, { items: [event("R-1"), event("R-2")], refs: [1] }),
      status: 400,
      code: "validation_failed",
    },
    {
      name: "an unknown policy",
      call: () => admin("POST", BATCH, { items: [], onConflict: "merge" }),
      status: 400,
      code: "validation_failed",
    },
    {
      name: "an import that does not exist",
      call: () => admin("POST", BATCH, { items: [event("I-1")], import: "nope" }),
      status: 404,
      code: "not_found",
    },
  ];
  it.each(refused)("$name: refused, nothing written", async ({ call, status, code }) => {
    const before = await count();
    problemOf(await call(), status, code);
    expect(await count()).toBe(before);
  });

  it("answers one result per item, in order, with the problem a single create would give", async () => {
    const response = await member("POST", BATCH, {
      items: [
        event("B-1"),
        { code: "B-2", name: "x" },
        event("b-1"),
        { ...event("B-3"), endsAt: "2027-01-01T00:00:00Z" },
        42,
      ],
      refs: [10, 11, 12, 13, 14],
    });
    expect(response.statusCode, response.body).toBe(200);
    const body = response.json();
    expect(body).toMatchObject({ created: 1, failed: 4, dryRun: false });
    expect(
      body.results.map((r: { index: number; ref: number; status: string; problem?: { code: string } }) => [
        r.index,
        r.ref,
        r.status,
        r.problem?.code,
      ]),
    ).toEqual([
      [0, 10, "created", undefined],
      [1, 11, "failed", "validation_failed"],
      [2, 12, "failed", "conflict"],
      [3, 13, "failed", "validation_failed"],
      [4, 14, "failed", "validation_failed"],
    ]);
    expect(body.results[1].problem.errors).toEqual([{ path: "/startsAt", message: "'startsAt' is required" }]);
  });

  it("an import is its opener's alone, and gone after its commit", async () => {
    const started = await member("POST", IMPORTS, { onConflict: "skip" });
    expect(started.statusCode, started.body).toBe(201);
    const { id } = started.json();
    problemOf(await admin("POST", BATCH, { items: [event("OTHER-1")], import: id }), 404, "not_found");
    problemOf(await admin("POST", `${IMPORTS}/${id}/commit`, {}), 404, "not_found");
    const staged = await member("POST", BATCH, { items: [event("OWN-1"), event("OWN-2")], import: id });
    expect(staged.json()).toMatchObject({ staged: 2, failed: 0 });
    expect(await count()).toBe(1);
    const committed = await member("POST", `${IMPORTS}/${id}/commit`, {});
    expect(committed.json()).toMatchObject({ committed: true, created: 2, failures: [] });
    expect(await count()).toBe(3);
    problemOf(await member("POST", `${IMPORTS}/${id}/commit`, {}), 404, "not_found");
    const left = await server.app.services.store.db.selectFrom("event_import_items").selectAll().execute();
    expect(left).toEqual([]);
  });
});
