import { describe, expect, it } from "vitest";
import { outboxReader, recipientsOf } from "../helpers/mail.js";
import { STORES } from "../helpers/postgres.js";
import { patchOf, USER_SCHEMA } from "../helpers/scim.js";
import { type Call, caller, useTestServer } from "../helpers/server.js";

/**
 * A login that outlives the token (a security review's finding, and the rule of
 * contract/policy/addresses.ts), on both stores: an admin's API token may change any User's
 * addresses, but no reset or invitation link that opens a privileged account is mailed to an
 * address a person's token set, however the account came to be privileged (created so, promoted,
 * or put in a group that grants admin), until an admin signed in confirms it. A service account's
 * token (the identity provider) and a person signed in set addresses links go to.
 */

const GROUP_SCHEMAS = ["urn:ietf:params:scim:schemas:core:2.0:Group", "urn:bizctl:schemas:extension:roles:2.0:Group"];

/** Who writes: an admin signed in, that admin's API token, the identity provider's service account token. */
type World = Record<"admin" | "adminToken" | "serviceAccountToken", Call>;

const emails = (address: string) => [{ value: address, primary: true }];
const setEmail = (address: string) => patchOf({ op: "replace", path: "emails", value: emails(address) });

interface Scenario {
  name: string;
  /** makes the account as the scenario says; the address links would go to */
  arrange: (world: World, userName: string) => Promise<string>;
  mailed: boolean;
}

async function created(call: Call, userName: string, roles: string[], address: string): Promise<string> {
  const answer = await call("POST", "/Users", {
    schemas: [USER_SCHEMA],
    userName,
    emails: emails(address),
    roles: roles.map((value) => ({ value })),
  });
  expect(answer.statusCode, answer.body).toBe(201);
  return (answer.json() as { id: string }).id;
}

async function patched(call: Call, id: string, body: object) {
  const answer = await call("PATCH", `/Users/${id}`, body);
  expect(answer.statusCode, answer.body).toBe(200);
}

/** An admin made by one writer, whose address another writes (at `domain`): the address links would go to. */
const rewritten =
  (maker: keyof World, writer: keyof World, domain: string): Scenario["arrange"] =>
  async (w, userName) => {
    const id = await created(w[maker], userName, ["admin"], `${userName}@made.example`);
    await patched(w[writer], id, setEmail(`${userName}@${domain}`));
    return `${userName}@${domain}`;
  };

/** A User the admin's token makes with these roles and an address; `then` does more with it. */
const madeByToken =
  (roles: string[], then?: (w: World, id: string, userName: string) => Promise<void>): Scenario["arrange"] =>
  async (w, userName) => {
    const address = `${userName}@token.example`;
    const id = await created(w.adminToken, userName, roles, address);
    await then?.(w, id, userName);
    return address;
  };

const SCENARIOS: Scenario[] = [
  {
    name: "an admin's token moves another admin's address",
    arrange: rewritten("admin", "adminToken", "attacker.example"),
    mailed: false,
  },
  { name: "an admin's token creates an admin with an address", arrange: madeByToken(["admin"]), mailed: false },
  {
    name: "an admin's token creates a member with an address, then promotes it",
    arrange: madeByToken(["member"], (w, id) =>
      patched(w.adminToken, id, patchOf({ op: "replace", path: "roles", value: [{ value: "support" }] })),
    ),
    mailed: false,
  },
  {
    name: "an admin's token puts a member whose address it set into a group that grants admin",
    arrange: madeByToken(["member"], async (w, id, userName) => {
      const group = await w.admin("POST", "/Groups", {
        schemas: GROUP_SCHEMAS,
        displayName: `Admins of ${userName}`,
        members: [{ value: id }],
        [GROUP_SCHEMAS[1] as string]: { roles: ["admin"] },
      });
      expect(group.statusCode, group.body).toBe(201);
    }),
    mailed: false,
  },
  {
    name: "an admin's token sets a member's address (a member's link opens no privilege)",
    arrange: madeByToken(["member"]),
    mailed: true,
  },
  {
    name: "an admin signed in confirms the address a token set",
    arrange: rewritten("adminToken", "admin", "corp.example"),
    mailed: true,
  },
  {
    name: "the identity provider's service account moves an admin's address",
    arrange: rewritten("admin", "serviceAccountToken", "corp.example"),
    mailed: true,
  },
];

describe.each(STORES)("where links to a privileged account go, on %s", (_store, start) => {
  const server = useTestServer({ loginRateLimit: { max: 10_000, timeWindowMs: 60_000 } }, start);
  let world: World | undefined;
  let counter = 0;

  async function worldOf(): Promise<World> {
    if (world) return world;
    const token = await server.call("POST", "/auth/tokens", { name: "automation" });
    expect(token.statusCode, token.body).toBe(201);
    const account = await server.call("POST", "/ServiceAccounts", { userName: "idp", roles: ["admin"] });
    expect(account.statusCode, account.body).toBe(201);
    const accountId = (account.json() as { id: string }).id;
    const idpToken = await server.call("POST", `/ServiceAccounts/${accountId}/tokens`, { name: "IdP" });
    expect(idpToken.statusCode, idpToken.body).toBe(201);
    world = {
      admin: server.call,
      adminToken: caller(server.app, (token.json() as { token: string }).token),
      serviceAccountToken: caller(server.app, (idpToken.json() as { token: string }).token),
    };
    return world;
  }

  it.each(SCENARIOS)("$name: a reset link is mailed: $mailed", async ({ arrange, mailed }) => {
    const userName = `linked.${++counter}`;
    const address = await arrange(await worldOf(), userName);
    const outbox = outboxReader(server.dataDir);
    await server.app.services.mailer.idle();
    await outbox.take();
    expect((await server.anonymous("POST", "/renewPassword", { userName })).statusCode).toBe(202);
    await server.app.services.mailer.idle();
    const sent = (await outbox.take()).flatMap(recipientsOf);
    expect(sent).toEqual(mailed ? [address] : []);
    const filter = encodeURIComponent(`action eq "password.reset_request" and target.name eq "${userName}"`);
    const trail = (await server.call("GET", `/audit?filter=${filter}`)).json() as { data: { outcome: string }[] };
    expect(trail.data.map((record) => record.outcome)).toEqual([mailed ? "success" : "address_unconfirmed"]);
    const id = (
      (await server.call("GET", `/Users?filter=${encodeURIComponent(`userName eq "${userName}"`)}`)).json() as {
        Resources: { id: string }[];
      }
    ).Resources[0]?.id;
    const diagnosis = (await server.call("GET", `/Users/${id}/diagnosis`)).json() as { reasons: { code: string }[] };
    expect(diagnosis.reasons.some((reason) => reason.code === "reset_address_unconfirmed")).toBe(!mailed);
    if (!mailed) {
      const invitation = await server.call("POST", `/Resources/${id}/invitation`);
      expect(invitation.statusCode, invitation.body).toBe(409);
      expect(invitation.body).toContain("API token");
    }
  });
});
