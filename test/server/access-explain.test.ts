import { beforeAll, describe, expect, it } from "vitest";
import { STORES } from "../helpers/postgres.js";
import {
  type Call,
  caller,
  type InjectResponse,
  insertUser,
  loggedIn,
  type TestServer,
  USER_PASSWORD,
  useTestServer,
} from "../helpers/server.js";

/**
 * `GET /Users/{id}/access?operation=...` (spec 1.11) on both stores: for each scenario (admin,
 * support, member; a role held directly or through a group; least privilege; an API token with and
 * without the scope) the explanation's answer and deciding rule, then the same operation performed
 * for real by that user (or that token): the real outcome is the one explained.
 */

const GROUP = "urn:ietf:params:scim:schemas:core:2.0:Group";
const ROLES_EXT = "urn:bizctl:schemas:extension:roles:2.0:Group";
const EVENTS = "/api/crm/v1/events";

type Who = "admin" | "sue" | "gus" | "mia";
type Explanation = {
  allowed: boolean;
  roles: { role: string; source: string }[];
  reasons: { rule: string; detail: string }[];
  refusal?: { message: string };
  token?: { scopes: string[] };
};

interface World {
  server: TestServer;
  ids: Record<Who, string>;
  /** each user's own login */
  as: Record<Who, Call>;
  admin: Call;
}

let serial = 0;
const event = () => ({ code: `EXPLAIN-${++serial}`, name: "Kick-off", startsAt: "2027-01-10T09:00:00Z" });

interface Scenario {
  name: string;
  who: Who;
  operation: string;
  target?: Who;
  /** the user's API token of these scopes: the explanation names it, the real call uses it */
  scopes?: string[];
  allowed: boolean;
  rule: string;
  /** the operation, performed for real by `call` */
  perform: (call: Call, world: World) => Promise<InjectResponse>;
}

const SCENARIOS: Scenario[] = [
  {
    name: "admin writes events",
    who: "admin",
    operation: "events:write",
    allowed: true,
    rule: "grant",
    perform: (call) => call("POST", EVENTS, event()),
  },
  {
    name: "a member writes events",
    who: "mia",
    operation: "events:write",
    allowed: true,
    rule: "grant",
    perform: (call) => call("POST", EVENTS, event()),
  },
  {
    name: "support does not write events",
    who: "sue",
    operation: "events:write",
    allowed: false,
    rule: "no-grant",
    perform: (call) => call("POST", EVENTS, event()),
  },
  {
    name: "a member deletes no user",
    who: "mia",
    operation: "users:delete",
    target: "gus",
    allowed: false,
    rule: "no-grant",
    perform: (call, w) => call("DELETE", `/Users/${w.ids.gus}`),
  },
  {
    name: "direct support unlocks a member",
    who: "sue",
    operation: "users:unlock",
    target: "mia",
    allowed: true,
    rule: "grant",
    perform: (call, w) => call("POST", `/auth/unlock/${w.ids.mia}`),
  },
  {
    name: "direct support may not unlock an admin",
    who: "sue",
    operation: "users:unlock",
    target: "admin",
    allowed: false,
    rule: "least-privilege",
    perform: (call, w) => call("POST", `/auth/unlock/${w.ids.admin}`),
  },
  {
    name: "support from a group unlocks a member",
    who: "gus",
    operation: "users:unlock",
    target: "mia",
    allowed: true,
    rule: "grant",
    perform: (call, w) => call("POST", `/auth/unlock/${w.ids.mia}`),
  },
  {
    name: "support from a group may not unlock support",
    who: "gus",
    operation: "users:unlock",
    target: "sue",
    allowed: false,
    rule: "least-privilege",
    perform: (call, w) => call("POST", `/auth/unlock/${w.ids.sue}`),
  },
  {
    name: "a token without events:write",
    who: "mia",
    operation: "events:write",
    scopes: ["events:read"],
    allowed: false,
    rule: "token-scope",
    perform: (call) => call("POST", EVENTS, event()),
  },
  {
    name: "a token with events:write",
    who: "mia",
    operation: "events:write",
    scopes: ["events:write"],
    allowed: true,
    rule: "grant",
    perform: (call) => call("POST", EVENTS, event()),
  },
  {
    name: "a token of every scope may not diagnose",
    who: "sue",
    operation: "users:diagnose",
    target: "mia",
    scopes: ["events:read", "events:write", "resources:read", "resources:write", "audit:read"],
    allowed: false,
    rule: "token-scope",
    perform: (call, w) => call("GET", `/Users/${w.ids.mia}/diagnosis`),
  },
];

describe.each(STORES)("access explain on %s", (_store, start) => {
  const server = useTestServer({ loginRateLimit: { max: 10_000, timeWindowMs: 60_000 } }, start);
  let world: World;

  beforeAll(async () => {
    const sue = await insertUser(server.app, { userName: "sue", password: USER_PASSWORD, roles: ["support"] });
    const gus = await insertUser(server.app, { userName: "gus", password: USER_PASSWORD, roles: ["member"] });
    const mia = await insertUser(server.app, { userName: "mia", password: USER_PASSWORD, roles: ["member"] });
    const group = await server.call("POST", "/Groups", {
      schemas: [GROUP, ROLES_EXT],
      displayName: "help desk",
      members: [{ value: gus.id }],
      [ROLES_EXT]: { roles: ["support"] },
    });
    expect(group.statusCode, group.body).toBe(201);
    const app = server.app;
    world = {
      server: server as unknown as TestServer,
      ids: { admin: server.admin.id, sue: sue.id, gus: gus.id, mia: mia.id },
      as: {
        admin: server.call,
        sue: await loggedIn(app, "sue"),
        gus: await loggedIn(app, "gus"),
        mia: await loggedIn(app, "mia"),
      },
      admin: server.call,
    };
  });

  async function tokenOf(who: Who, scopes: string[]) {
    const made = await world.as[who]("POST", "/auth/tokens", { name: `t${++serial}`, scopes });
    expect(made.statusCode, made.body).toBe(201);
    return made.json() as { id: string; token: string };
  }

  it.each(SCENARIOS)("$name: explained, then performed for real", async (scenario) => {
    const token = scenario.scopes && (await tokenOf(scenario.who, scenario.scopes));
    const query = new URLSearchParams({ operation: scenario.operation });
    if (scenario.target) query.set("target", world.ids[scenario.target]);
    if (token) query.set("token", token.id);
    const asked = await world.admin("GET", `/Users/${world.ids[scenario.who]}/access?${query}`);
    expect(asked.statusCode, asked.body).toBe(200);
    const explained = asked.json() as Explanation;
    expect(explained.allowed).toBe(scenario.allowed);
    expect(explained.reasons.at(-1)?.rule).toBe(scenario.rule);
    if (token) expect(explained.token?.scopes).toEqual(scenario.scopes);

    const call = token ? caller(server.app, token.token) : world.as[scenario.who];
    const real = await scenario.perform(call, world);
    expect(real.statusCode < 400, real.body).toBe(scenario.allowed);
    // a caller who may not even read the target is answered 404, so that ids do not leak
    if (!scenario.allowed) expect(scenario.target ? [403, 404] : [403]).toContain(real.statusCode);
    if (scenario.rule === "least-privilege" || scenario.rule === "token-scope") {
      expect((real.json() as { detail: string }).detail).toBe(explained.refusal?.message);
    }
  });

  it("says where each role comes from: held directly or from a group", async () => {
    const gus = (
      await world.admin("GET", `/Users/${world.ids.gus}/access?operation=users:unlock`)
    ).json() as Explanation;
    expect(gus.roles).toEqual([
      { role: "support", source: "help desk" },
      { role: "member", source: "direct" },
    ]);
  });

  it("lets support ask about a user, but not see another user's token; a member may not ask", async () => {
    const token = await tokenOf("mia", ["events:read"]);
    const bySupport = await world.as.sue("GET", `/Users/${world.ids.mia}/access?operation=events:write`);
    expect(bySupport.statusCode, bySupport.body).toBe(200);
    const tokenBySupport = await world.as.sue(
      "GET",
      `/Users/${world.ids.mia}/access?operation=events:write&token=${token.id}`,
    );
    expect(tokenBySupport.statusCode, tokenBySupport.body).toBe(403);
    const byMember = await world.as.mia("GET", `/Users/${world.ids.gus}/access?operation=events:write`);
    expect(byMember.statusCode, byMember.body).toBe(403);
  });

  it("answers an unknown operation with 400 listing the valid ones", async () => {
    const answer = await world.admin("GET", `/Users/${world.ids.mia}/access?operation=users:fly`);
    expect(answer.statusCode, answer.body).toBe(400);
    expect(answer.body).toContain("Unknown operation 'users:fly'");
    expect(answer.body).toContain("users:set-password");
  });

  it("names the last-admin rule when the target is the last active admin, and the real delete is refused by it", async () => {
    const query = `operation=users:delete&target=${world.ids.admin}`;
    const explained = (await world.admin("GET", `/Users/${world.ids.admin}/access?${query}`)).json() as Explanation;
    expect(explained.reasons.map((reason) => reason.rule)).toEqual(["roles", "grant", "last-admin"]);
    expect(explained.reasons.at(-1)?.rule).toBe("last-admin");
    const real = await world.admin("DELETE", `/Users/${world.ids.admin}`);
    expect(real.statusCode, real.body).toBe(409);
    expect(real.body).toContain("last_admin");
  });
});
