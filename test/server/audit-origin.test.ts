/**
 * Where a request came from (the client address and user agent of an audit record) is shown to a
 * member only on its own records: not on the records of an admin or support person acting on it,
 * nor of an anonymous caller trying its account; and a member's filter cannot test those values
 * either. Admins and support see every origin. Through the full pipeline (inject), on SQLite and
 * on PostgreSQL.
 */
import { beforeAll, describe, expect, it } from "vitest";
import type { AuditRecord } from "../helpers/audit.js";
import { STORES } from "../helpers/postgres.js";
import { caller, insertUser, USER_PASSWORD, useTestServer } from "../helpers/server.js";

/** who sent which request, each from an address and agent of its own */
const ORIGINS = {
  admin: { ip: "198.51.100.1", agent: "admin-desk/1" },
  support: { ip: "198.51.100.2", agent: "support-desk/1" },
  member: { ip: "203.0.113.5", agent: "member-phone/1" },
  stranger: { ip: "192.0.2.66", agent: "stranger/1" },
} as const;
type Who = keyof typeof ORIGINS;

describe.each(STORES)("audit records and the origin of requests (%s)", (_store, start) => {
  // every login of this suite comes from an origin of its own
  const server = useTestServer({ login: false }, start);
  const ids: Record<"admin" | "support" | "member", string> = { admin: "", support: "", member: "" };
  const tokens: Record<"admin" | "support" | "member", string> = { admin: "", support: "", member: "" };

  const from = (who: Who) => ({
    remoteAddress: ORIGINS[who].ip,
    headers: { "user-agent": ORIGINS[who].agent },
  });

  async function loginAs(who: "admin" | "support" | "member", userName: string, password: string) {
    const response = await server.app.inject({
      method: "POST",
      url: "/auth/login",
      payload: { userName, password },
      ...from(who),
    });
    expect(response.statusCode, response.body).toBe(200);
    return (response.json() as { token: string }).token;
  }

  /** GET /audit as `who`, every record about the member (a page is enough here). */
  async function read(who: "admin" | "support" | "member", filter?: string): Promise<AuditRecord[]> {
    const query = new URLSearchParams({ pagesize: "500", ...(filter && { filter }) });
    const response = await caller(server.app, tokens[who])("GET", `/audit?${query}`);
    expect(response.statusCode, response.body).toBe(200);
    const records = (response.json() as { data: AuditRecord[] }).data;
    return records.filter((r) => r.actor?.id === ids.member || r.target?.id === ids.member);
  }

  beforeAll(async () => {
    ids.admin = server.admin.id;
    const support = await insertUser(server.app, {
      userName: "sam.support",
      password: USER_PASSWORD,
      roles: ["support"],
    });
    const member = await insertUser(server.app, { userName: "mia.member", password: USER_PASSWORD, roles: ["member"] });
    ids.support = support.id;
    ids.member = member.id;
    tokens.admin = await loginAs("admin", server.admin.userName, server.admin.password);
    tokens.support = await loginAs("support", support.userName, USER_PASSWORD);
    // the member's own record: its login
    tokens.member = await loginAs("member", member.userName, USER_PASSWORD);
    // an admin acting on the member: a new display name
    const current = await caller(server.app, tokens.admin)("GET", `/Resources/${ids.member}`);
    const body = { ...(current.json() as Record<string, unknown>), displayName: "Mia M." };
    const put = await server.app.inject({
      method: "PUT",
      url: `/Resources/${ids.member}`,
      payload: body,
      remoteAddress: ORIGINS.admin.ip,
      headers: { authorization: `Bearer ${tokens.admin}`, "user-agent": ORIGINS.admin.agent },
    });
    expect(put.statusCode, put.body).toBe(200);
    // support acting on the member: sessions ended
    const ended = await server.app.inject({
      method: "DELETE",
      url: `/Resources/${ids.member}/sessions`,
      remoteAddress: ORIGINS.support.ip,
      headers: { authorization: `Bearer ${tokens.support}`, "user-agent": ORIGINS.support.agent },
    });
    expect(ended.statusCode, ended.body).toBeLessThan(300);
    tokens.member = await loginAs("member", member.userName, USER_PASSWORD);
    // an anonymous caller trying the member's password
    const refused = await server.app.inject({
      method: "POST",
      url: "/auth/login",
      payload: { userName: member.userName, password: "not the password at all 1" },
      ...from("stranger"),
    });
    expect(refused.statusCode).toBe(401);
  }, 60_000);

  /** whose records about the member each reader reads: the actors whose origin it sees, and those whose it does not */
  const READS: Record<"admin" | "support" | "member", { sees: Who[]; not?: Who[] }> = {
    member: { sees: ["member"], not: ["admin", "support", "stranger"] },
    support: { sees: ["member", "admin", "stranger"] },
    admin: { sees: ["member", "support", "stranger"] },
  };
  /** the origin `reader` sees on the record that `actor` left about the member */
  const SCENARIOS = Object.entries(READS).flatMap(([reader, { sees, not = [] }]) => [
    ...sees.map((actor) => ({ reader: reader as keyof typeof READS, actor, sees: true })),
    ...not.map((actor) => ({ reader: reader as keyof typeof READS, actor, sees: false })),
  ]);

  it.each(SCENARIOS)("$reader reading what $actor did: origin shown $sees", async ({ reader, actor, sees }) => {
    const records = await read(reader);
    const left = records.filter((r) =>
      actor === "stranger" ? r.actor === undefined && r.outcome === "invalid_credentials" : r.actor?.id === ids[actor],
    );
    expect(left.length, JSON.stringify(records)).toBeGreaterThan(0);
    for (const record of left) {
      if (sees) expect(record).toMatchObject({ clientIp: ORIGINS[actor].ip, userAgent: ORIGINS[actor].agent });
      else {
        expect(record.clientIp, JSON.stringify(record)).toBeUndefined();
        expect(record.userAgent, JSON.stringify(record)).toBeUndefined();
      }
    }
  });

  const FILTERS: { reader: "admin" | "member"; filter: string; matches: Who[] }[] = [
    { reader: "member", filter: `clientIp eq "${ORIGINS.admin.ip}"`, matches: [] },
    { reader: "member", filter: `userAgent co "support"`, matches: [] },
    { reader: "member", filter: `clientIp sw "192.0.2."`, matches: [] },
    { reader: "member", filter: "clientIp pr", matches: ["member"] },
    { reader: "member", filter: `clientIp eq "${ORIGINS.member.ip}"`, matches: ["member"] },
    { reader: "admin", filter: `clientIp eq "${ORIGINS.admin.ip}"`, matches: ["admin"] },
    { reader: "admin", filter: `userAgent co "support"`, matches: ["support"] },
  ];

  it.each(FILTERS)(
    "$reader filtering by '$filter' finds the records of $matches",
    async ({ reader, filter, matches }) => {
      const records = await read(reader, filter);
      const actors = new Set(
        records.map((r) => (Object.entries(ids).find(([, id]) => id === r.actor?.id)?.[0] ?? "stranger") as Who),
      );
      expect([...actors].sort()).toEqual([...matches].sort());
    },
  );
});
