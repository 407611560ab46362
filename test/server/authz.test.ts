import { beforeAll, describe, expect, it } from "vitest";
import type { Role } from "../../src/contract/route.js";
import {
  type Call,
  createEvent,
  createResource,
  type InjectResponse,
  NEW_PASSWORD,
  problemOf,
  type ServerFixture,
  type SignedIn,
  TEMP_PASSWORD,
  USER_PASSWORD,
  useTestServer,
} from "../helpers/server.js";

/**
 * The roles table of the specification (section 1), cell by cell: every operation of every area
 * as admin, support, member, a user whose first login is pending (an admin with a temporary
 * password, so that only the first-login rule can refuse it) and an anonymous caller.
 */

type Actor = "admin" | "support" | "member" | "pending" | "anonymous";
const ACTORS: Actor[] = ["admin", "support", "member", "pending", "anonymous"];
type Json = Record<string, unknown>;

const EVENTS = "/api/crm/v1/events";

interface World {
  server: ServerFixture;
  admin: Call;
  /** the caller of the cell */
  call: Call;
  actor: Actor;
  /** the actor's own user id (the admin's for anonymous) */
  selfId: string;
  shared: { user: Json; consumer: Json; room: Json; event: string };
  /** a new user of this role logged in, for the operations that end or change its sessions */
  freshActor(): Promise<Call>;
}

/** The expected answer: a success status, or an error status and code. */
type Outcome = number | [status: number, code: string];

interface Operation {
  area: "auth" | "events" | "resources";
  name: string;
  run(world: World): Promise<InjectResponse>;
  /** the outcome for admin, support and member; pending and anonymous follow the general rules */
  expect: Record<"admin" | "support" | "member", Outcome>;
  /** allowed while the first login is pending */
  duringFirstLogin?: boolean;
}

const FORBIDDEN: Outcome = [403, "forbidden"];
const NOT_FOUND: Outcome = [404, "not_found"];

let eventCounter = 0;
const newEventCode = () => `AZ-${++eventCounter}`;

async function newEvent(world: World): Promise<string> {
  const code = newEventCode();
  await createEvent(world.admin, { code, name: "Fresh", startsAt: "2027-05-01T10:00:00Z" });
  return code;
}

const newUser = (world: World) =>
  createResource(world.admin, { resourceType: "User", userName: `u-${crypto.randomUUID()}`, title: "Clerk" });
async function newConsumer(world: World): Promise<Json> {
  // the representation to PUT back is what GET shows (the secret is shown once, at creation)
  const { consumerSecret: _secret, ...consumer } = await createResource(world.admin, {
    resourceType: "OAuthConsumer",
    name: "Fresh",
  });
  return consumer;
}
const newRoom = (world: World) => createResource(world.admin, { resourceType: "Room", floor: 1 });
/** a new User of this role, logged in: the target of the operations on another user's credentials */
const newSignedIn = (world: World, role: Role): Promise<SignedIn> =>
  world.server.signIn({ userName: `t-${crypto.randomUUID()}`, password: USER_PASSWORD, roles: [role] });
/** a new User of this role with an API token of its own */
async function withToken(world: World, role: Role = "member"): Promise<{ userId: string; tokenId: string }> {
  const user = await newSignedIn(world, role);
  const created = await user.call("POST", "/auth/tokens", { name: "target" });
  expect(created.statusCode, created.body).toBe(201);
  return { userId: user.id, tokenId: (created.json() as { id: string }).id };
}
/** a new User of this role whose second factor is enrolled (pending counts: a reset removes either) */
async function withFactor(world: World, role: Role): Promise<string> {
  const user = await newSignedIn(world, role);
  const started = await user.call("POST", "/auth/mfa/totp");
  expect(started.statusCode, started.body).toBe(200);
  return user.id;
}
const put = (world: World, resource: Json, changes: Json) =>
  world.call("PUT", `/Resources/${resource.id}`, { ...resource, ...changes });

const OPERATIONS: Operation[] = [
  // ---------------------------------------------------------------- auth
  {
    area: "auth",
    name: "isLogged",
    duringFirstLogin: true,
    run: (w) => w.call("GET", "/auth/isLogged"),
    expect: { admin: 200, support: 200, member: 200 },
  },
  {
    area: "auth",
    name: "isFirstLogin (self)",
    duringFirstLogin: true,
    run: (w) => w.call("GET", "/auth/isFirstLogin"),
    expect: { admin: 200, support: 200, member: 200 },
  },
  {
    area: "auth",
    name: "isFirstLogin of oneself by id",
    duringFirstLogin: true,
    run: (w) => w.call("GET", `/auth/isFirstLogin/${w.selfId}`),
    expect: { admin: 200, support: 200, member: 200 },
  },
  {
    area: "auth",
    name: "isFirstLogin of another employee",
    duringFirstLogin: true,
    run: (w) => w.call("GET", `/auth/isFirstLogin/${w.shared.user.id}`),
    expect: { admin: 200, support: 200, member: FORBIDDEN },
  },
  {
    area: "auth",
    name: "isFirstLogin of an unknown employee",
    duringFirstLogin: true,
    run: (w) => w.call("GET", `/auth/isFirstLogin/${crypto.randomUUID()}`),
    expect: { admin: NOT_FOUND, support: NOT_FOUND, member: FORBIDDEN },
  },
  {
    area: "auth",
    name: "ChangePassWithLastPass",
    duringFirstLogin: true,
    run: async (w) => {
      const call = w.actor === "anonymous" ? w.call : await w.freshActor();
      const lastPassword = w.actor === "pending" ? TEMP_PASSWORD : USER_PASSWORD;
      return call("POST", "/auth/ChangePassWithLastPass", { lastPassword, newPassword: NEW_PASSWORD });
    },
    expect: { admin: 204, support: 204, member: 204 },
  },
  {
    area: "auth",
    name: "logout",
    duringFirstLogin: true,
    run: async (w) => (w.actor === "anonymous" ? w.call : await w.freshActor())("POST", "/auth/logout"),
    expect: { admin: 204, support: 204, member: 204 },
  },
  {
    area: "auth",
    name: "second factor: state of one's own",
    run: (w) => w.call("GET", "/auth/mfa/totp"),
    expect: { admin: 200, support: 200, member: 200 },
  },
  {
    area: "auth",
    name: "second factor: enroll one's own",
    run: async (w) => (w.actor === "anonymous" ? w.call : await w.freshActor())("POST", "/auth/mfa/totp"),
    expect: { admin: 200, support: 200, member: 200 },
  },
  {
    area: "auth",
    name: "API tokens: create one's own",
    run: (w) => w.call("POST", "/auth/tokens", { name: "cell" }),
    expect: { admin: 201, support: 201, member: 201 },
  },
  {
    area: "auth",
    name: "API tokens: list one's own",
    run: (w) => w.call("GET", "/auth/tokens"),
    expect: { admin: 200, support: 200, member: 200 },
  },
  {
    area: "auth",
    name: "API tokens: revoke another user's through one's own list",
    run: async (w) => w.call("DELETE", `/auth/tokens/${(await withToken(w)).tokenId}`),
    expect: { admin: NOT_FOUND, support: NOT_FOUND, member: NOT_FOUND },
  },
  // ---------------------------------------------------------------- events
  {
    area: "events",
    name: "list",
    run: (w) => w.call("GET", EVENTS),
    expect: { admin: 200, support: 200, member: 200 },
  },
  {
    area: "events",
    name: "get",
    run: (w) => w.call("GET", `${EVENTS}/${w.shared.event}`),
    expect: { admin: 200, support: 200, member: 200 },
  },
  {
    area: "events",
    name: "create",
    run: (w) => w.call("POST", EVENTS, { code: newEventCode(), name: "New", startsAt: "2027-05-01T10:00:00Z" }),
    expect: { admin: 201, support: FORBIDDEN, member: 201 },
  },
  {
    area: "events",
    name: "update",
    run: async (w) =>
      w.call("PUT", `${EVENTS}/${await newEvent(w)}`, { name: "Changed", startsAt: "2027-05-02T10:00:00Z" }),
    expect: { admin: 200, support: FORBIDDEN, member: 200 },
  },
  {
    area: "events",
    name: "delete",
    run: async (w) => w.call("DELETE", `${EVENTS}/${await newEvent(w)}`),
    expect: { admin: 204, support: FORBIDDEN, member: 204 },
  },
  // ---------------------------------------------------------------- resources
  {
    area: "resources",
    name: "list",
    run: (w) => w.call("GET", "/Resources"),
    expect: { admin: 200, support: 200, member: 200 },
  },
  {
    area: "resources",
    name: "get own User",
    run: (w) => w.call("GET", `/Resources/${w.selfId}`),
    expect: { admin: 200, support: 200, member: 200 },
  },
  {
    area: "resources",
    name: "get another User",
    run: (w) => w.call("GET", `/Resources/${w.shared.user.id}`),
    expect: { admin: 200, support: 200, member: NOT_FOUND },
  },
  {
    area: "resources",
    name: "get an OAuthConsumer",
    run: (w) => w.call("GET", `/Resources/${w.shared.consumer.id}`),
    expect: { admin: 200, support: 200, member: NOT_FOUND },
  },
  {
    area: "resources",
    name: "get a custom-type resource",
    run: (w) => w.call("GET", `/Resources/${w.shared.room.id}`),
    expect: { admin: 200, support: 200, member: 200 },
  },
  {
    area: "resources",
    name: "create a User",
    run: (w) => w.call("POST", "/Resources", { resourceType: "User", userName: `n-${crypto.randomUUID()}` }),
    expect: { admin: 201, support: FORBIDDEN, member: FORBIDDEN },
  },
  {
    area: "resources",
    name: "create a User with a password",
    run: (w) =>
      w.call("POST", "/Resources", {
        resourceType: "User",
        userName: `p-${crypto.randomUUID()}`,
        password: TEMP_PASSWORD,
      }),
    expect: { admin: 201, support: FORBIDDEN, member: FORBIDDEN },
  },
  {
    area: "resources",
    name: "create an OAuthConsumer",
    run: (w) => w.call("POST", "/Resources", { resourceType: "OAuthConsumer", name: "New" }),
    expect: { admin: 201, support: FORBIDDEN, member: FORBIDDEN },
  },
  {
    area: "resources",
    name: "create a custom-type resource",
    run: (w) => w.call("POST", "/Resources", { resourceType: "Room", floor: 2 }),
    expect: { admin: 201, support: FORBIDDEN, member: FORBIDDEN },
  },
  {
    area: "resources",
    name: "update another User (title)",
    run: async (w) => put(w, await newUser(w), { title: "Boss" }),
    expect: { admin: 200, support: FORBIDDEN, member: NOT_FOUND },
  },
  {
    area: "resources",
    name: "update own User (title)",
    run: async (w) => {
      const own = (await w.admin("GET", `/Resources/${w.selfId}`)).json() as Json;
      return put(w, own, { title: "Self-promoted" });
    },
    expect: { admin: 200, support: FORBIDDEN, member: FORBIDDEN },
  },
  {
    area: "resources",
    name: "User: set a temporary password",
    run: async (w) => put(w, await newUser(w), { password: TEMP_PASSWORD }),
    expect: { admin: 200, support: 200, member: NOT_FOUND },
  },
  {
    area: "resources",
    name: "User: set active",
    run: async (w) => put(w, await newUser(w), { active: false }),
    expect: { admin: 200, support: 200, member: NOT_FOUND },
  },
  {
    area: "resources",
    name: "User: set a password and active together",
    run: async (w) => put(w, await newUser(w), { active: false, password: TEMP_PASSWORD }),
    expect: { admin: 200, support: 200, member: NOT_FOUND },
  },
  {
    area: "resources",
    name: "User: set a password and change another attribute",
    run: async (w) => put(w, await newUser(w), { password: TEMP_PASSWORD, title: "Boss" }),
    expect: { admin: 200, support: FORBIDDEN, member: NOT_FOUND },
  },
  {
    area: "resources",
    name: "User: change roles",
    run: async (w) => put(w, await newUser(w), { roles: [{ value: "support" }] }),
    expect: { admin: 200, support: FORBIDDEN, member: NOT_FOUND },
  },
  {
    area: "resources",
    name: "User: change own roles",
    run: async (w) => {
      const own = (await w.admin("GET", `/Resources/${w.selfId}`)).json() as Json;
      return put(w, own, { roles: [{ value: "admin" }, { value: "support" }] });
    },
    expect: { admin: 200, support: FORBIDDEN, member: FORBIDDEN },
  },
  {
    area: "resources",
    name: "delete a User",
    run: async (w) => w.call("DELETE", `/Resources/${(await newUser(w)).id}`),
    expect: { admin: 204, support: FORBIDDEN, member: NOT_FOUND },
  },
  {
    area: "resources",
    name: "update an OAuthConsumer",
    run: async (w) => put(w, await newConsumer(w), { name: "Renamed" }),
    expect: { admin: 200, support: FORBIDDEN, member: NOT_FOUND },
  },
  {
    area: "resources",
    name: "delete an OAuthConsumer",
    run: async (w) => w.call("DELETE", `/Resources/${(await newConsumer(w)).id}`),
    expect: { admin: 204, support: FORBIDDEN, member: NOT_FOUND },
  },
  {
    area: "resources",
    name: "update a custom-type resource",
    run: async (w) => put(w, await newRoom(w), { floor: 9 }),
    expect: { admin: 200, support: FORBIDDEN, member: FORBIDDEN },
  },
  {
    area: "resources",
    name: "delete a custom-type resource",
    run: async (w) => w.call("DELETE", `/Resources/${(await newRoom(w)).id}`),
    expect: { admin: 204, support: FORBIDDEN, member: FORBIDDEN },
  },
  {
    area: "resources",
    name: "list another User's API tokens",
    run: async (w) => w.call("GET", `/Resources/${(await withToken(w)).userId}/tokens`),
    expect: { admin: 200, support: FORBIDDEN, member: FORBIDDEN },
  },
  {
    area: "resources",
    name: "revoke another User's API token",
    run: async (w) => {
      const { userId, tokenId } = await withToken(w);
      return w.call("DELETE", `/Resources/${userId}/tokens/${tokenId}`);
    },
    expect: { admin: 204, support: FORBIDDEN, member: FORBIDDEN },
  },
  {
    area: "resources",
    name: "reset an ordinary User's second factor",
    run: async (w) => w.call("DELETE", `/Resources/${await withFactor(w, "member")}/mfa?reason=lost+phone`),
    expect: { admin: 200, support: 200, member: FORBIDDEN },
  },
  {
    area: "resources",
    name: "reset an admin's second factor",
    run: async (w) => w.call("DELETE", `/Resources/${await withFactor(w, "admin")}/mfa?reason=lost+phone`),
    expect: { admin: 200, support: FORBIDDEN, member: FORBIDDEN },
  },
];

function outcomeOf(operation: Operation, actor: Actor): Outcome {
  if (actor === "anonymous") return [401, "token_missing"];
  if (actor === "pending")
    return operation.duringFirstLogin ? operation.expect.admin : [403, "password_change_required"];
  return operation.expect[actor];
}

const CELLS = OPERATIONS.flatMap((operation) =>
  ACTORS.map((actor) => {
    const outcome = outcomeOf(operation, actor);
    const label = typeof outcome === "number" ? String(outcome) : outcome.join(" ");
    return { title: `${operation.area}: ${operation.name} as ${actor} → ${label}`, operation, actor, outcome };
  }),
);

describe("authorization: the roles table, cell by cell", () => {
  // each cell on another user's credentials logs a new user in: more logins than a minute allows one client
  const server = useTestServer({ loginRateLimit: { max: 10_000, timeWindowMs: 60_000 } });
  const admin = server.call;
  const calls = {} as Record<Actor, Call>;
  const ids = {} as Record<Actor, string>;
  let shared: World["shared"];

  /** a user of this actor's roles, logged in (pending: an admin with a temporary password) */
  const signInAs = (actor: Actor, userName: string) => {
    const temporary = actor === "pending";
    const roles: Role[] = temporary ? ["admin"] : [actor as Role];
    return server.signIn({ userName, password: temporary ? TEMP_PASSWORD : USER_PASSWORD, roles, temporary });
  };

  beforeAll(async () => {
    calls.admin = admin;
    ids.admin = server.admin.id;
    for (const actor of ["support", "member", "pending"] as const) {
      const user = await signInAs(actor, `the.${actor}`);
      calls[actor] = user.call;
      ids[actor] = user.id;
    }
    calls.anonymous = server.anonymous;
    ids.anonymous = server.admin.id;
    shared = {
      user: await createResource(admin, { resourceType: "User", userName: "shared.user" }),
      consumer: await newConsumer({ admin } as World),
      room: await createResource(admin, { resourceType: "Room", floor: 5 }),
      event: "SHARED",
    };
    await createEvent(admin, { code: "SHARED", name: "Shared", startsAt: "2027-05-01T10:00:00Z" });
  });

  let freshCount = 0;
  const freshActor = async (actor: Actor) => (await signInAs(actor, `fresh.${actor}.${++freshCount}`)).call;

  for (const { title, operation, actor, outcome } of CELLS)
    it(title, async () => {
      const world: World = {
        server,
        admin,
        call: calls[actor],
        actor,
        selfId: ids[actor],
        shared,
        freshActor: () => freshActor(actor),
      };
      const response = await operation.run(world);
      if (typeof outcome === "number") {
        expect(response.statusCode, response.body.slice(0, 300)).toBe(outcome);
      } else {
        problemOf(response, outcome[0], outcome[1]);
      }
    });

  it("leaves the actors' own sessions working after all the cells", async () => {
    for (const actor of ["admin", "support", "member", "pending"] as Actor[]) {
      expect((await calls[actor]("GET", "/auth/isLogged")).statusCode, actor).toBe(200);
    }
  });

  it("changed nothing through a refused cell: the shared resources are as created", async () => {
    for (const resource of [shared.user, shared.consumer, shared.room]) {
      const now = (await admin("GET", `/Resources/${resource.id}`)).json() as Json;
      expect(now).toEqual(resource);
    }
  });
});
