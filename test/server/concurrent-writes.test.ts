import { describe, expect, it } from "vitest";
import { STORES } from "../helpers/postgres.js";
import { type Call, createEvent, createResource, problemOf, useTestServer } from "../helpers/server.js";

/**
 * Writes to one record at the same time. A PUT or DELETE without If-Match asks for no
 * precondition: losing a race to another writer must not answer 412 (last write wins). With
 * If-Match, the version it names is gone for all but the first, which 412 says. And creates at the
 * same time, which share a commit: each still gets the answer it would have had alone.
 */

const WRITERS = 12;
const EVENTS = "/api/crm/v1/events";

interface Target {
  name: string;
  /** creates the record as `admin`; returns its URL and a body for PUT that carries `n` */
  make(admin: Call, key: string): Promise<{ url: string; body: (n: number) => object }>;
  /** the version a representation carries */
  versionOf(body: Record<string, unknown>): number;
}

const targets: Target[] = [
  {
    name: "event",
    make: async (admin, key) => {
      const code = `RACE-${key}`;
      const body = (n: number) => ({ code, name: `writer ${n}`, startsAt: "2030-01-01T10:00:00Z" });
      await createEvent(admin, body(0));
      return { url: `${EVENTS}/${code}`, body };
    },
    versionOf: (body) => Number(body.version),
  },
  {
    name: "user",
    make: async (admin, key) => {
      const userName = `race.${key}`;
      const user = await createResource(admin, { resourceType: "User", userName });
      return { url: `/Resources/${user.id}`, body: (n) => ({ resourceType: "User", userName, title: `writer ${n}` }) };
    },
    versionOf: (body) => Number(/"(\d+)"/.exec(String((body.meta as { version: string }).version))?.[1]),
  },
];

describe.each(STORES)("concurrent writes (%s)", (_store, start) => {
  const server = useTestServer({}, start);
  const admin = server.call;
  const put = (url: string, payload: object, headers: Record<string, string> = {}) =>
    admin("PUT", url, payload, headers);

  it.each(targets)("$name: unconditional PUTs all succeed, each at a version of its own", async (target) => {
    const { url, body } = await target.make(admin, "plain");
    const answers = await Promise.all(Array.from({ length: WRITERS }, (_, n) => put(url, body(n + 1))));
    for (const answer of answers) expect(answer.statusCode, answer.body).toBe(200);
    const versions = answers.map((a) => target.versionOf(a.json())).sort((a, b) => a - b);
    expect(versions).toEqual(Array.from({ length: WRITERS }, (_, i) => i + 2));
    const final = await admin("GET", url);
    expect(target.versionOf(final.json())).toBe(WRITERS + 1);
  });

  it.each(targets)("$name: PUTs with the same If-Match: one succeeds, the others 412", async (target) => {
    const { url, body } = await target.make(admin, "guarded");
    const answers = await Promise.all(
      Array.from({ length: WRITERS }, (_, n) => put(url, body(n + 1), { "if-match": '"1"' })),
    );
    expect(answers.filter((a) => a.statusCode === 200)).toHaveLength(1);
    for (const refused of answers.filter((a) => a.statusCode !== 200)) problemOf(refused, 412, "precondition_failed");
    const final = await admin("GET", url);
    expect(target.versionOf(final.json())).toBe(2);
  });

  it("creates at the same time: each is written with its audit record, a code given twice is 409 once", async () => {
    // the creates arrive in one turn of the event loop and share a commit; the duplicate fails
    // that batch, and every create then runs alone with its own outcome
    const codes = Array.from({ length: WRITERS }, (_, n) => `SAME-TURN-${n}`);
    const payloads = [...codes, codes[3]!, codes[7]!].map((code) => ({
      code,
      name: code,
      startsAt: "2030-01-01T10:00:00Z",
    }));
    const answers = await Promise.all(payloads.map((payload) => admin("POST", EVENTS, payload)));
    const statuses = answers.map((answer) => answer.statusCode);
    expect(statuses.filter((status) => status === 201)).toHaveLength(WRITERS);
    for (const refused of answers.filter((answer) => answer.statusCode !== 201)) problemOf(refused, 409, "conflict");
    const { db } = server.app.services.store;
    const stored = await db.selectFrom("events").select("code").where("code", "like", "SAME-TURN-%").execute();
    expect(stored.map((row) => row.code).sort()).toEqual([...codes].sort());
    const audited = await db
      .selectFrom("audit_log")
      .select("target_name")
      .where("action", "=", "event.create")
      .where("target_name", "like", "SAME-TURN-%")
      .execute();
    expect(audited.map((row) => row.target_name).sort()).toEqual([...codes].sort());
  });
});
