/**
 * Service accounts (spec 1.9), on both stores: an admin creates one and its tokens (support and
 * members may not); it never logs in, is never invited nor given a password; its token provisions
 * Users over SCIM, and the audit trail names the account and the token (id and name) for each
 * change, after the token is revoked too.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { outboxReader, recipientsOf } from "../helpers/mail.js";
import { STORES } from "../helpers/postgres.js";
import { caller, problemOf, type SignedIn, USER_PASSWORD, useTestServer } from "../helpers/server.js";

interface Account {
  id: string;
  userName: string;
  roles: string[];
  active: boolean;
}

describe.each(STORES)("service accounts on %s", (_store, start) => {
  const server = useTestServer({}, start);
  let support: SignedIn;
  let member: SignedIn;
  let account: Account;

  beforeAll(async () => {
    support = await server.signIn({ userName: "sam.support", roles: ["support"] });
    member = await server.signIn({ userName: "mia.member", roles: ["member"], email: "mia@example.com" });
    const created = await server.call("POST", "/ServiceAccounts", {
      userName: "entra-provisioning",
      roles: ["admin"],
    });
    expect(created.statusCode, created.body).toBe(201);
    account = created.json() as Account;
  });

  it("is created and listed by an admin, marked read-only on its User", async () => {
    expect(account).toMatchObject({ userName: "entra-provisioning", roles: ["admin"], active: true });
    const listed = (await server.call("GET", "/ServiceAccounts")).json() as { serviceAccounts: Account[] };
    expect(listed.serviceAccounts.map((one) => one.userName)).toEqual(["entra-provisioning"]);
    const user = (await server.call("GET", `/Resources/${account.id}`)).json() as Record<string, unknown>;
    expect(user).toMatchObject({ serviceAccount: true, passwordState: "none" });
    const person = (await server.call("GET", `/Resources/${member.id}`)).json() as Record<string, unknown>;
    expect(person.serviceAccount).toBe(false);
  });

  it.each([
    { who: "support", method: "POST", path: "/ServiceAccounts", body: { userName: "x", roles: ["member"] } },
    { who: "support", method: "GET", path: "/ServiceAccounts" },
    { who: "member", method: "GET", path: "/ServiceAccounts" },
    { who: "support", method: "POST", path: "/ServiceAccounts/ID/tokens", body: { name: "x" } },
  ] as const)("refuses $who: $method $path (403)", async ({ who, method, path, ...rest }) => {
    const call = (who === "support" ? support : member).call;
    const response = await call(method, path.replace("ID", account.id), "body" in rest ? rest.body : undefined);
    problemOf(response, 403, "forbidden");
  });

  it("refuses a token for a User that is a person (404)", async () => {
    problemOf(await server.call("POST", `/ServiceAccounts/${member.id}/tokens`, { name: "x" }), 404, "not_found");
  });

  it.each([
    {
      what: "a login",
      send: () =>
        caller(server.app)("POST", "/auth/login", { userName: "entra-provisioning", password: USER_PASSWORD }),
    },
    { what: "an invitation", send: () => server.call("POST", `/Resources/${account.id}/invitation`) },
    {
      what: "a password set by an admin",
      send: () =>
        server.call("PATCH", `/Resources/${account.id}`, {
          schemas: ["urn:ietf:params:scim:api:messages:2.0:PatchOp"],
          Operations: [{ op: "replace", path: "password", value: USER_PASSWORD }],
        }),
    },
  ])("refuses $what with a service_account problem (403)", async ({ send }) => {
    const response = await send();
    const problem = problemOf(response, 403, "service_account");
    expect(problem.detail).toContain("entra-provisioning is a service account");
  });

  it("gets no reset link by the anonymous forgot-password request, even with an address: nothing is mailed", async () => {
    const added = await server.call("PATCH", `/Users/${account.id}`, {
      schemas: ["urn:ietf:params:scim:api:messages:2.0:PatchOp"],
      Operations: [{ op: "add", path: "emails", value: [{ value: "idp@example.com", primary: true }] }],
    });
    expect(added.statusCode, added.body).toBe(200);
    const outbox = outboxReader(server.dataDir);
    await outbox.take();
    for (const userName of ["entra-provisioning", "idp@example.com", member.userName]) {
      // the same answer as for anyone, so the request tells nothing of the account
      expect((await server.anonymous("POST", "/renewPassword", { userName })).statusCode).toBe(202);
    }
    await server.app.services.mailer.idle();
    const sent = (await outbox.take()).flatMap(recipientsOf);
    expect(sent).not.toContain("idp@example.com");
    expect(sent).toHaveLength(1); // the person's, which shows the outbox is read
    const filter = encodeURIComponent(`action eq "password.reset_request" and target.id eq "${account.id}"`);
    const records = (await server.call("GET", `/audit?filter=${filter}`)).json() as { data: { outcome: string }[] };
    expect(records.data.map((record) => record.outcome)).toEqual(["service_account"]);
  });

  it("is diagnosed as what it is, by the check that refuses its login, and nothing more", async () => {
    const diagnosis = await server.call("GET", `/Users/${account.id}/diagnosis`);
    expect(diagnosis.statusCode, diagnosis.body).toBe(200);
    const { reasons } = diagnosis.json() as {
      reasons: { code: string; effect: string; check: string; fix?: { command?: string } }[];
    };
    expect(reasons).toEqual([
      expect.objectContaining({
        code: "service_account",
        effect: "refused",
        check: "person",
        fix: expect.objectContaining({ command: "bizctl service-accounts token-create entra-provisioning" }),
      }),
    ]);
  });

  it("cannot enroll a second factor: its only credential, a token, never may", async () => {
    const made = await server.call("POST", `/ServiceAccounts/${account.id}/tokens`, { name: "enroll" });
    const token = (made.json() as { token: string }).token;
    problemOf(await caller(server.app, token)("POST", "/auth/mfa/totp"), 403, "forbidden");
  });

  it("provisions Users over SCIM with its token; the audit trail names the account and the token", async () => {
    const made = await server.call("POST", `/ServiceAccounts/${account.id}/tokens`, {
      name: "Entra ID",
      scopes: ["resources:read", "resources:write", "audit:read"],
    });
    expect(made.statusCode, made.body).toBe(201);
    const token = made.json() as { token: string; id: string; name: string };
    const idp = caller(server.app, token.token);
    const created = await idp("POST", "/Users", {
      schemas: ["urn:ietf:params:scim:schemas:core:2.0:User"],
      userName: "ada@example.com",
      name: { givenName: "Ada", familyName: "Lovelace" },
      active: true,
    });
    expect(created.statusCode, created.body).toBe(201);
    const userId = (created.json() as { id: string }).id;
    const patched = await idp("PATCH", `/Users/${userId}`, {
      schemas: ["urn:ietf:params:scim:api:messages:2.0:PatchOp"],
      Operations: [{ op: "Replace", path: "active", value: false }],
    });
    expect(patched.statusCode, patched.body).toBeLessThan(300);
    expect((await idp("DELETE", `/Users/${userId}`)).statusCode).toBe(204);
    // the token's own management of the account stays with admins: it cannot make tokens
    expect((await idp("POST", "/auth/tokens", { name: "more" })).statusCode).toBe(403);

    // revoked, the token's records keep its name
    expect((await server.call("DELETE", `/Resources/${account.id}/tokens/${token.id}`)).statusCode).toBe(204);
    const filter = encodeURIComponent(`target.id eq "${userId}"`);
    const listed = await server.call("GET", `/audit?filter=${filter}`);
    expect(listed.statusCode, listed.body).toBe(200);
    const records = (listed.json() as { data: { action: string; actor: Record<string, string> }[] }).data;
    expect(records.length).toBeGreaterThanOrEqual(3);
    for (const record of records) {
      expect(record.actor).toEqual({
        id: account.id,
        userName: "entra-provisioning",
        apiTokenId: token.id,
        apiTokenName: "Entra ID",
      });
    }
  });
});
