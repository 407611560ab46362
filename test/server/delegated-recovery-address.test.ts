/**
 * The address that receives an account's reset links is part of the account (spec 1.1, issue 41):
 * an API token or an application's grant never changes its own User's e-mail addresses, by any
 * path, and never gives a password at creation; a pending link dies once the address it was
 * mailed to is not the account's link address any more. Over real HTTP, on SQLite and PostgreSQL.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { hashPassword } from "../../src/server/services/passwords.js";
import {
  type Answer,
  bearerCaller,
  bulkRequest,
  grantCaller,
  type HttpCall,
  patchRequest,
  refusalOf,
} from "../helpers/http-call.js";
import { outboxReader, requestResetToken, resetLinkOf } from "../helpers/mail.js";
import { createConsumer, injectFlow } from "../helpers/oauth.js";
import { STORES } from "../helpers/postgres.js";
import { USER_SCHEMA } from "../helpers/scim.js";
import { createResource, insertUser, NEW_PASSWORD, overHttp, problemOf, useTestServer } from "../helpers/server.js";

/** The first operation's status of a /Bulk answer. */
async function bulkStatus(answer: Promise<Answer>): Promise<string> {
  const response = await answer;
  expect(response.statusCode, response.body).toBe(200);
  return String((response.json().Operations as { status: string }[])[0]?.status);
}

const ATTACKER = "attacker@evil.example";

interface Self {
  id: string;
  /** the User as GET /Resources shows it */
  current: Record<string, unknown>;
}

/** A write of the caller's own User: the request alone, or as the one operation of a /Bulk request. */
interface Write {
  name: string;
  method: "PUT" | "PATCH";
  /** `{id}` stands for the User's id */
  path: string;
  body(self: Self): unknown;
  inBulk?: boolean;
}

const moved = [{ value: ATTACKER, primary: true }];
const scimUser = (self: Self) => ({
  schemas: [USER_SCHEMA],
  userName: self.current.userName,
  roles: self.current.roles,
  emails: moved,
});
const patchOf = (op: { op: string; path?: string; value?: unknown }) => () => patchRequest(op);

/** Every way a client writes its own User's e-mail addresses; each answers what the single request would. */
const EMAIL_CHANGES: Write[] = [
  {
    name: "PUT /Resources",
    method: "PUT",
    path: "/Resources/{id}",
    body: (self) => ({ ...self.current, emails: moved }),
  },
  {
    name: "PUT /Resources without the emails (all removed)",
    method: "PUT",
    path: "/Resources/{id}",
    body: ({ current: { emails: _emails, ...rest } }) => rest,
  },
  {
    name: "PATCH /Resources replace emails",
    method: "PATCH",
    path: "/Resources/{id}",
    body: patchOf({ op: "replace", path: "emails", value: [{ value: ATTACKER }] }),
  },
  {
    name: "PATCH /Users replace through a value filter",
    method: "PATCH",
    path: "/Users/{id}",
    body: patchOf({ op: "Replace", path: "emails[primary eq true].value", value: ATTACKER }),
  },
  {
    name: "PATCH /Users path-less replace",
    method: "PATCH",
    path: "/Users/{id}",
    body: patchOf({ op: "replace", value: { emails: moved } }),
  },
  {
    name: "PATCH /Users add a primary address",
    method: "PATCH",
    path: "/Users/{id}",
    body: patchOf({ op: "add", path: "emails", value: moved }),
  },
  {
    name: "PATCH /Users remove by a value filter",
    method: "PATCH",
    path: "/Users/{id}",
    body: patchOf({ op: "remove", path: "emails[primary eq true]" }),
  },
  { name: "PUT /Users", method: "PUT", path: "/Users/{id}", body: scimUser },
  { name: "PUT /Me", method: "PUT", path: "/Me", body: scimUser },
  {
    name: "PATCH /Me",
    method: "PATCH",
    path: "/Me",
    body: patchOf({ op: "replace", path: "emails", value: [{ value: ATTACKER }] }),
  },
  {
    name: "/Bulk PATCH /Users",
    method: "PATCH",
    path: "/Users/{id}",
    body: patchOf({ op: "replace", path: "emails", value: [{ value: ATTACKER }] }),
    inBulk: true,
  },
  {
    name: "/Bulk PUT /Resources",
    method: "PUT",
    path: "/Resources/{id}",
    body: (self) => ({ ...self.current, emails: moved }),
    inBulk: true,
  },
];

/** Sends a write: its status, or in /Bulk its operation's status. */
async function send(call: HttpCall, write: Write, self: Self): Promise<string> {
  const path = write.path.replace("{id}", self.id);
  if (!write.inBulk) return String((await call(write.method, path, write.body(self))).statusCode);
  return bulkStatus(call("POST", "/Bulk", bulkRequest({ method: write.method, path, data: write.body(self) })));
}

/** Every way a client creates a User with a password (a password given at creation is one set). */
const PASSWORD_CREATES: { name: string; run(call: HttpCall, userName: string): Promise<number | string> }[] = [
  {
    name: "POST /Resources with a password",
    run: async (call, userName) =>
      (await call("POST", "/Resources", { resourceType: "User", userName, password: NEW_PASSWORD })).statusCode,
  },
  {
    name: "POST /Users with a password",
    run: async (call, userName) =>
      (await call("POST", "/Users", { schemas: [USER_SCHEMA], userName, password: NEW_PASSWORD })).statusCode,
  },
  {
    name: "POST /Users with a password hash",
    run: async (call, userName) =>
      (
        await call("POST", "/Users", {
          schemas: [USER_SCHEMA],
          userName,
          passwordHash: await hashPassword(NEW_PASSWORD),
        })
      ).statusCode,
  },
  {
    name: "/Bulk POST /Users with a password",
    run: (call, userName) =>
      bulkStatus(
        call(
          "POST",
          "/Bulk",
          bulkRequest({ method: "POST", path: "/Users", bulkId: "u", data: { userName, password: NEW_PASSWORD } }),
        ),
      ),
  },
  {
    name: "/Bulk POST /Resources with a password, spelt Password",
    run: (call, userName) =>
      bulkStatus(
        call(
          "POST",
          "/Bulk",
          bulkRequest({
            method: "POST",
            path: "/Users",
            bulkId: "u",
            data: { userName, roles: [{ value: "admin" }], Password: NEW_PASSWORD },
          }),
        ),
      ),
  },
];

describe.each(STORES)("delegated credentials and the recovery address on %s", (_store, start) => {
  const server = useTestServer({ listen: true, loginRateLimit: { max: 10_000, timeWindowMs: 60_000 } }, start);
  const credentials: { kind: string; call: HttpCall }[] = [];
  let owner: { id: string; userName: string; call: HttpCall };
  let other: { id: string };

  beforeAll(async () => {
    const consumer = await createConsumer(server.app, server.token, { name: "Partner" });
    const userName = `owner-${crypto.randomUUID().slice(0, 8)}`;
    const signedIn = await server.signIn({ userName, roles: ["admin"], email: `${userName}@example.com` });
    owner = { id: signedIn.id, userName, call: bearerCaller(server.url, signedIn.token) };
    // a token made without scopes: every scope, resources:write among them
    const made = await owner.call("POST", "/auth/tokens", { name: "script" });
    expect(made.statusCode, made.body).toBe(201);
    const { access } = await injectFlow(server.app, consumer, signedIn.token);
    credentials.push(
      { kind: "an API token", call: bearerCaller(server.url, String(made.json().token)) },
      { kind: "an application's grant", call: grantCaller(server.url, consumer, access) },
    );
    const created = await createResource(server.call, {
      resourceType: "User",
      userName: `other-${crypto.randomUUID().slice(0, 8)}`,
      emails: [{ value: "other@example.com", primary: true }],
    });
    other = { id: String(created.id) };
  });

  const changes = EMAIL_CHANGES.flatMap((change) => [0, 1].map((credential) => ({ change, credential })));

  it.each(changes)(
    "$change.name of its own User with credential $credential: 403, nothing changes",
    async ({ change, credential }) => {
      const current = (await server.call("GET", `/Resources/${owner.id}`)).json() as Record<string, unknown>;
      const status = await send(credentials[credential]!.call, change, { id: owner.id, current });
      expect(String(status), credentials[credential]!.kind).toBe("403");
      const after = (await server.call("GET", `/Resources/${owner.id}`)).json() as Record<string, unknown>;
      expect(after.emails).toEqual(current.emails);
      expect(after.meta).toEqual(current.meta);
    },
  );

  it.each([0, 1])("credential %i still changes another user's addresses and its own other attributes", async (i) => {
    const call = credentials[i]!.call;
    const theirs = await call(
      "PATCH",
      `/Users/${other.id}`,
      patchRequest({ op: "replace", path: "emails", value: [{ value: `x${i}@example.com` }] }),
    );
    expect(theirs.statusCode, theirs.body).toBe(200);
    const own = await call(
      "PATCH",
      `/Users/${owner.id}`,
      patchRequest({ op: "replace", path: "title", value: `Title ${i}` }),
    );
    expect(own.statusCode, own.body).toBe(200);
    const refused = await call(
      "PATCH",
      `/Users/${owner.id}`,
      patchRequest({ op: "add", path: "emails", value: [{ value: ATTACKER }] }),
    );
    expect(refusalOf(refused, 403, "forbidden").detail).toMatch(/e-mail addresses need the user's own login/);
  });

  it("lets the user's own login change its own addresses", async () => {
    const answer = await owner.call(
      "PATCH",
      `/Users/${owner.id}`,
      patchRequest({ op: "add", path: "emails", value: [{ value: "second@example.com" }] }),
    );
    expect(answer.statusCode, answer.body).toBe(200);
  });

  const creates = PASSWORD_CREATES.flatMap((create) => [0, 1].map((credential) => ({ create, credential })));

  it.each(creates)("$create.name with credential $credential: 403, no user", async ({ create, credential }) => {
    const userName = `made-${crypto.randomUUID().slice(0, 8)}`;
    expect(String(await create.run(credentials[credential]!.call, userName))).toBe("403");
    const found = await server.call("GET", `/Users?filter=${encodeURIComponent(`userName eq "${userName}"`)}`);
    expect(found.json().totalResults).toBe(0);
  });

  it("lets a delegated credential create a User without a password", async () => {
    const answer = await credentials[0]!.call("POST", "/Users", {
      schemas: [USER_SCHEMA],
      userName: `plain-${crypto.randomUUID().slice(0, 8)}`,
    });
    expect(answer.statusCode, answer.body).toBe(201);
  });
});

describe.each(STORES)("links and the address they were mailed to on %s", (_store, start) => {
  const server = useTestServer({ listen: true, loginRateLimit: { max: 10_000, timeWindowMs: 60_000 } }, start);
  const admin = () => bearerCaller(server.url, server.token);

  async function userWith(email: string, password = true) {
    const userName = `linked-${crypto.randomUUID().slice(0, 8)}`;
    if (password)
      return {
        ...(await insertUser(server.app, {
          userName,
          password: NEW_PASSWORD.split("").reverse().join(""),
          roles: ["member"],
          email,
        })),
        email,
      };
    const created = await createResource(server.call, {
      resourceType: "User",
      userName,
      emails: [{ value: email, primary: true }],
    });
    return { id: String(created.id), userName, email };
  }

  async function invitationToken(user: { id: string; email: string }): Promise<string> {
    const sent = await admin()("POST", `/Resources/${user.id}/invitation`);
    expect(sent.statusCode, sent.body).toBe(202);
    await server.app.services.mailer.idle();
    const mail = (await outboxReader(server.dataDir).take())
      .filter((m) => JSON.stringify(m.to).includes(user.email))
      .at(-1);
    if (!mail) throw new Error(`no invitation to ${user.email}`);
    return resetLinkOf(mail).token;
  }

  const CHANGES: { name: string; emails: (old: string) => unknown[]; dies: boolean }[] = [
    { name: "the address replaced", emails: () => [{ value: ATTACKER, primary: true }], dies: true },
    {
      name: "another address made primary",
      emails: (old) => [{ value: old }, { value: ATTACKER, primary: true }],
      dies: true,
    },
    { name: "every address removed", emails: () => [], dies: true },
    {
      name: "a second address added",
      emails: (old) => [{ value: old, primary: true }, { value: "more@example.com" }],
      dies: false,
    },
    { name: "the address in capitals", emails: (old) => [{ value: old.toUpperCase(), primary: true }], dies: false },
  ];

  const cases = CHANGES.flatMap((change) => (["reset", "invitation"] as const).map((kind) => ({ change, kind })));

  it.each(cases)("a $kind link, then $change.name", async ({ change, kind }) => {
    const email = `${crypto.randomUUID().slice(0, 8)}@example.com`;
    const user = await userWith(email, kind === "reset");
    const token =
      kind === "reset"
        ? await requestResetToken(server, { userName: user.userName, email })
        : await invitationToken(user);
    const changed = await admin()(
      "PATCH",
      `/Users/${user.id}`,
      patchRequest({ op: "replace", path: "emails", value: change.emails(email) }),
    );
    expect(changed.statusCode, changed.body).toBe(200);
    const used = await overHttp(server.url, "PUT", "/resetPassword", {
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ token, newPassword: NEW_PASSWORD }),
    });
    if (change.dies) problemOf(used, 400, "invalid_reset_token");
    else expect(used.statusCode, used.body).toBe(204);
  });
});
