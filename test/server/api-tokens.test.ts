/**
 * API tokens for scripts (spec 1.7), on both stores: created once and shown once, listed and
 * revoked by their owner (and by admins, not by support or members); as a Bearer credential they
 * act with the owner's current roles narrowed to their scopes, are refused when revoked, expired
 * or when the owner is disabled, never manage the account, and never reach the audit trail.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { STORES } from "../helpers/postgres.js";
import {
  type Call,
  caller,
  createEvent,
  type InjectResponse,
  manualClock,
  NEW_PASSWORD,
  problemOf,
  type SignedIn,
  USER_PASSWORD,
  useTestServer,
} from "../helpers/server.js";

interface Created {
  token: string;
  id: string;
  name: string;
  scopes: string[];
  createdAt: string;
  expiresAt: string;
}

interface Listed {
  id: string;
  name: string;
  scopes: string[];
  createdAt: string;
  expiresAt: string;
  lastUsedAt?: string;
  lastUsedIp?: string;
}

const ALL_SCOPES = ["events:read", "events:write", "resources:read", "resources:write", "audit:read"];
const DAY_MS = 86_400_000;
const EVENTS = "/api/crm/v1/events";

async function create(call: Call, body: Record<string, unknown>): Promise<Created> {
  const response = await call("POST", "/auth/tokens", body);
  if (response.statusCode !== 201)
    throw new Error(`POST /auth/tokens answered ${response.statusCode}: ${response.body}`);
  return response.json() as Created;
}

async function listOf(call: Call, path = "/auth/tokens"): Promise<Listed[]> {
  const response = await call("GET", path);
  expect(response.statusCode, response.body).toBe(200);
  return (response.json() as { tokens: Listed[] }).tokens;
}

/** A refused token's answer: the problem, and RFC 6750's challenge with error="invalid_token". */
function refusedToken(response: InjectResponse, code: string) {
  problemOf(response, 401, code);
  expect(response.headers["www-authenticate"]).toMatch(/^Bearer realm="bizctl", error="invalid_token"/);
}

describe.each(STORES)("API tokens on %s", (_store, start) => {
  const clock = manualClock(new Date("2027-03-01T08:00:00Z"));
  const server = useTestServer({ clock: clock.clock }, start);
  let member: SignedIn;
  let support: SignedIn;
  let users = 0;

  beforeAll(async () => {
    member = await server.signIn({ userName: "mia.member", roles: ["member"] });
    support = await server.signIn({ userName: "sam.support", roles: ["support"] });
  });

  /** A user of these roles with a fresh login. */
  const another = (roles: ("admin" | "support" | "member")[]) =>
    server.signIn({ userName: `user.${++users}`, roles, password: USER_PASSWORD });

  it("answers the token once: bzt_ and 32 base62 characters, 90 days and every scope by default", async () => {
    const created = await create(member.call, { name: "nightly export" });
    expect(created.token).toMatch(/^bzt_[0-9A-Za-z]{32}$/);
    expect(created).toMatchObject({ name: "nightly export", scopes: ALL_SCOPES });
    expect(Date.parse(created.expiresAt) - Date.parse(created.createdAt)).toBe(90 * DAY_MS);
    // two tokens never share their random part
    expect((await create(member.call, { name: "second" })).token).not.toBe(created.token);

    const listed = await listOf(member.call);
    const entry = listed.find((token) => token.id === created.id);
    expect(entry).toEqual({
      id: created.id,
      name: "nightly export",
      scopes: ALL_SCOPES,
      createdAt: created.createdAt,
      expiresAt: created.expiresAt,
    });
    // never the token, nor anything that holds it
    const raw = JSON.stringify(listed);
    expect(raw).not.toContain(created.token);
    expect(raw).not.toContain(created.token.slice(4));
  });

  it.each([
    { body: { name: "x", expiresInDays: 367 }, why: "beyond 366 days" },
    { body: { name: "x", expiresInDays: 0 }, why: "no day at all" },
    { body: { name: "x", expiresInDays: 1.5 }, why: "part of a day" },
    { body: { name: "x", scopes: ["events:admin"] }, why: "an unknown scope" },
    { body: { name: "x", scopes: [] }, why: "an empty list of scopes" },
    { body: { name: "" }, why: "an empty name" },
    { body: { expiresInDays: 30 }, why: "no name" },
  ])("refuses $why with 400", async ({ body }) => {
    problemOf(await member.call("POST", "/auth/tokens", body), 400, "validation_failed");
  });

  it("takes 366 days at most, and the scopes asked for, once each, in the contract's order", async () => {
    const created = await create(member.call, {
      name: "a year",
      expiresInDays: 366,
      scopes: ["resources:read", "events:read", "resources:read"],
    });
    expect(Date.parse(created.expiresAt) - Date.parse(created.createdAt)).toBe(366 * DAY_MS);
    expect(created.scopes).toEqual(["events:read", "resources:read"]);
  });

  describe("a token with events:read only", () => {
    let token: Created;
    let call: Call;
    beforeAll(async () => {
      await createEvent(server.call, { code: "SCOPED-1", name: "Scoped", startsAt: "2027-05-01T10:00:00Z" });
      token = await create(member.call, { name: "reader", scopes: ["events:read"] });
      call = caller(server.app, token.token);
    });

    it.each([
      { method: "GET", path: EVENTS, status: 200 },
      { method: "GET", path: `${EVENTS}/SCOPED-1`, status: 200 },
      { method: "GET", path: "/auth/isLogged", status: 200 },
      {
        method: "POST",
        path: EVENTS,
        status: 403,
        body: { code: "SCOPED-2", name: "No", startsAt: "2027-05-01T10:00:00Z" },
      },
      { method: "DELETE", path: `${EVENTS}/SCOPED-1`, status: 403 },
      { method: "GET", path: "/Resources", status: 403 },
      { method: "GET", path: "/Users", status: 403 },
      { method: "GET", path: "/audit", status: 403 },
    ] as const)("$method $path answers $status", async ({ method, path, status, ...rest }) => {
      const response = await call(method, path, "body" in rest ? rest.body : undefined);
      expect(response.statusCode, response.body).toBe(status);
      // a problem document, or on /Users a SCIM error that keeps the problem's code
      if (status === 403) expect(response.json()).toMatchObject({ code: "forbidden" });
    });

    it("acts as its owner, and isLogged says which token it is", async () => {
      const response = await call("GET", "/auth/isLogged");
      expect(response.json()).toMatchObject({
        user: { id: member.id, roles: ["member"] },
        expiresAt: token.expiresAt,
        credential: { type: "api-token", id: token.id, name: "reader", scopes: ["events:read"] },
      });
      // the owner's own login is a session
      expect((await member.call("GET", "/auth/isLogged")).json().credential).toEqual({ type: "session" });
    });
  });

  it.each([
    { what: "create a token", method: "POST", path: "/auth/tokens", body: { name: "child" } },
    { what: "list tokens", method: "GET", path: "/auth/tokens" },
    {
      what: "change the password",
      method: "POST",
      path: "/auth/ChangePassWithLastPass",
      body: { lastPassword: USER_PASSWORD, newPassword: NEW_PASSWORD },
    },
    { what: "list the sessions", method: "GET", path: "/auth/sessions" },
    { what: "list OAuth grants", method: "GET", path: "/oauth/tokens" },
  ] as const)("a token cannot $what, whatever its scopes (403)", async ({ method, path, ...rest }) => {
    const token = await create(member.call, { name: "everything" });
    const response = await caller(server.app, token.token)(method, path, "body" in rest ? rest.body : undefined);
    expect(problemOf(response, 403, "forbidden").detail).toMatch(/API token/);
  });

  it("refuses a revoked token from the next request on, and logs it out with itself", async () => {
    const token = await create(member.call, { name: "short-lived" });
    const call = caller(server.app, token.token);
    expect((await call("GET", EVENTS)).statusCode).toBe(200);
    expect((await member.call("DELETE", `/auth/tokens/${token.id}`)).statusCode).toBe(204);
    refusedToken(await call("GET", EVENTS), "token_revoked");
    expect((await listOf(member.call)).map((t) => t.id)).not.toContain(token.id);
    // once revoked, it is not there to revoke again
    problemOf(await member.call("DELETE", `/auth/tokens/${token.id}`), 404, "not_found");

    const other = await create(member.call, { name: "logs out" });
    expect((await caller(server.app, other.token)("POST", "/auth/logout")).statusCode).toBe(204);
    refusedToken(await caller(server.app, other.token)("GET", EVENTS), "token_revoked");
  });

  it.each([
    { what: "an unknown token", token: `bzt_${"A".repeat(32)}` },
    { what: "a malformed one", token: "bzt_short" },
  ])("refuses $what as token_invalid", async ({ token }) => {
    refusedToken(await caller(server.app, token)("GET", EVENTS), "token_invalid");
  });

  it("refuses a token once it expires", async () => {
    const user = await another(["member"]);
    const token = await create(user.call, { name: "a day", expiresInDays: 1 });
    // the expiry is moved in the store: advancing the clock a day would end every login of the suite
    const expireAt = (ms: number) =>
      server.app.services.store.db
        .updateTable("api_tokens")
        .set({ expires_at: new Date(ms).toISOString() })
        .where("id", "=", token.id)
        .execute();
    await expireAt(clock.clock().getTime() + 1000);
    expect((await caller(server.app, token.token)("GET", EVENTS)).statusCode).toBe(200);
    await expireAt(clock.clock().getTime());
    refusedToken(await caller(server.app, token.token)("GET", EVENTS), "token_expired");
  });

  it("refuses the token of a disabled owner at once", async () => {
    const user = await another(["member"]);
    const token = await create(user.call, { name: "disabled" });
    const call = caller(server.app, token.token);
    expect((await call("GET", EVENTS)).statusCode).toBe(200);
    const current = (await server.call("GET", `/Resources/${user.id}`)).json() as Record<string, unknown>;
    expect((await server.call("PUT", `/Resources/${user.id}`, { ...current, active: false })).statusCode).toBe(200);
    refusedToken(await call("GET", EVENTS), "token_revoked");
    // a disabling ends the tokens as it ends the sessions: enabling the account again revives none
    const disabled = (await server.call("GET", `/Resources/${user.id}`)).json() as Record<string, unknown>;
    expect((await server.call("PUT", `/Resources/${user.id}`, { ...disabled, active: true })).statusCode).toBe(200);
    refusedToken(await call("GET", EVENTS), "token_revoked");
  });

  it("ends the owner's tokens when the owner changes the password", async () => {
    const user = await another(["member"]);
    const token = await create(user.call, { name: "before the change" });
    const changed = await user.call("POST", "/auth/ChangePassWithLastPass", {
      lastPassword: USER_PASSWORD,
      newPassword: NEW_PASSWORD,
    });
    expect(changed.statusCode, changed.body).toBe(204);
    refusedToken(await caller(server.app, token.token)("GET", EVENTS), "token_revoked");
    expect(await listOf(user.call)).toEqual([]);
  });

  it("loses what a demoted owner lost, at once", async () => {
    const admin = await another(["admin"]);
    const token = await create(admin.call, { name: "provisioning", scopes: ["resources:write", "resources:read"] });
    const call = caller(server.app, token.token);
    const widget = () => call("POST", "/Resources", { resourceType: "Widget", name: `w-${crypto.randomUUID()}` });
    expect((await widget()).statusCode).toBe(201);
    const current = (await server.call("GET", `/Resources/${admin.id}`)).json() as Record<string, unknown>;
    const demoted = await server.call("PUT", `/Resources/${admin.id}`, { ...current, roles: [{ value: "member" }] });
    expect(demoted.statusCode, demoted.body).toBe(200);
    problemOf(await widget(), 403, "forbidden");
    expect((await call("GET", "/auth/isLogged")).json()).toMatchObject({ user: { roles: ["member"] } });
  });

  describe("another user's tokens", () => {
    let owner: SignedIn;
    let token: Created;
    beforeAll(async () => {
      owner = await another(["member"]);
      token = await create(owner.call, { name: "owned" });
    });

    it.each([
      { who: "support", call: () => support.call },
      { who: "a member", call: () => member.call },
    ])("$who may neither list nor revoke them (403)", async ({ call }) => {
      problemOf(await call()("GET", `/Resources/${owner.id}/tokens`), 403, "forbidden");
      problemOf(await call()("DELETE", `/Resources/${owner.id}/tokens/${token.id}`), 403, "forbidden");
    });

    it("an admin lists and revokes them; the owner's token is refused next", async () => {
      expect((await listOf(server.call, `/Resources/${owner.id}/tokens`)).map((t) => t.name)).toEqual(["owned"]);
      expect((await server.call("DELETE", `/Resources/${owner.id}/tokens/${token.id}`)).statusCode).toBe(204);
      refusedToken(await caller(server.app, token.token)("GET", EVENTS), "token_revoked");
      expect(await listOf(server.call, `/Resources/${owner.id}/tokens`)).toEqual([]);
      // a token of someone else is not found under another user, nor under the caller's own list
      problemOf(await server.call("DELETE", `/Resources/${member.id}/tokens/${token.id}`), 404, "not_found");
      problemOf(await server.call("GET", `/Resources/${crypto.randomUUID()}/tokens`), 404, "not_found");
    });
  });

  it("records last use to the minute, a new address at once, and the audit trail never holds the token", async () => {
    const user = await another(["member"]);
    const token = await create(user.call, { name: "cron", scopes: ["events:read"] });
    const from = (ip: string) =>
      server.app.inject({
        method: "GET",
        url: EVENTS,
        headers: { authorization: `Bearer ${token.token}` },
        remoteAddress: ip,
      });
    const lastUse = async () => (await listOf(user.call)).find((t) => t.id === token.id)!;

    await from("192.0.2.10");
    const first = await lastUse();
    expect(first).toMatchObject({
      lastUsedIp: "192.0.2.10",
      lastUsedAt: clock.clock().toISOString().replace(".000", ""),
    });
    clock.advance(30_000);
    await from("192.0.2.10");
    expect((await lastUse()).lastUsedAt).toBe(first.lastUsedAt);
    await from("198.51.100.7");
    expect(await lastUse()).toMatchObject({ lastUsedIp: "198.51.100.7" });
    expect((await lastUse()).lastUsedAt).not.toBe(first.lastUsedAt);
    clock.advance(61_000);
    await from("198.51.100.7");
    expect(Date.parse((await lastUse()).lastUsedAt!)).toBe(clock.clock().getTime());
    expect((await user.call("DELETE", `/auth/tokens/${token.id}`)).statusCode).toBe(204);

    const rows = await server.app.services.store.db
      .selectFrom("audit_log")
      .selectAll()
      .where("target_id", "=", user.id)
      .orderBy("id")
      .execute();
    const tokenRows = rows.filter((row) => row.action.startsWith("token."));
    expect(tokenRows.map((row) => [row.action, row.client_ip])).toEqual([
      ["token.create", expect.anything()],
      ["token.use", "192.0.2.10"],
      ["token.use", "198.51.100.7"],
      ["token.revoke", expect.anything()],
    ]);
    expect(JSON.parse(tokenRows[2]!.details!)).toMatchObject({ tokenId: token.id, previousIp: "192.0.2.10" });
    const everything = JSON.stringify(await server.app.services.store.db.selectFrom("audit_log").selectAll().execute());
    expect(everything).not.toContain(token.token.slice(4));
  });

  it("names the token in the audit records of what it does, and GET /audit filters on it", async () => {
    const user = await another(["admin"]);
    const token = await create(user.call, { name: "deploy", scopes: ["resources:write", "audit:read"] });
    const withToken = caller(server.app, token.token);
    const created = await withToken("POST", "/Resources", { resourceType: "Room", floor: 3 });
    expect(created.statusCode, created.body).toBe(201);
    // the same action with the owner's login names no token
    expect((await user.call("POST", "/Resources", { resourceType: "Room", floor: 4 })).statusCode).toBe(201);

    const filter = encodeURIComponent(`actor.apiTokenId eq "${token.id}" and action eq "resource.create"`);
    const listed = await withToken("GET", `/audit?filter=${filter}`);
    expect(listed.statusCode, listed.body).toBe(200);
    const records = (listed.json() as { data: { actor: Record<string, string>; target: { id: string } }[] }).data;
    expect(records.map((r) => [r.actor, r.target.id])).toEqual([
      [
        { id: user.id, userName: user.userName, apiTokenId: token.id, apiTokenName: "deploy" },
        (created.json() as { id: string }).id,
      ],
    ]);
  });
});
