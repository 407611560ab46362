/**
 * A whole provisioning run as an identity provider makes it with its service account's token,
 * over a real socket, on SQLite and PostgreSQL: Users pushed, groups pushed and filled, a leaver
 * deactivated and taken out of its group, a group deleted. After each step the Users hold exactly
 * the roles the identity provider intended (an admin of bizctl gave each group its roles once),
 * and at the end the audit trail names the service account and its token for every change the
 * identity provider made, and the admin for the roles.
 */
import { describe, expect, it } from "vitest";
import { findAccountById } from "../../src/server/store/users-repo.js";
import { DATABASES, patchOf, type ScimServer, USER_SCHEMA, useScimServer } from "../helpers/scim.js";

const GROUP = "urn:ietf:params:scim:schemas:core:2.0:Group";
const ROLES_EXT = "urn:bizctl:schemas:extension:roles:2.0:Group";
const PEOPLE = ["alice", "bob", "carol"] as const;
type Person = (typeof PEOPLE)[number];

interface AuditRecord {
  action: string;
  outcome: string;
  actor?: { id?: string; userName?: string; apiTokenId?: string; apiTokenName?: string };
  target?: { type?: string; name?: string };
}

interface Step {
  name: string;
  /** what the identity provider sends, with its service account's token */
  run: (idp: Idp) => Promise<void>;
  /** each person's effective roles, and whether it is active, after the step */
  expected: Record<Person, { roles: string[]; active: boolean }>;
}

interface Idp {
  send(method: string, path: string, body?: unknown): Promise<{ status: number; json(): Record<string, unknown> }>;
  user(person: Person): string;
  group(name: string): string;
  /** what an admin of bizctl does once: gives a pushed group its roles */
  grant(name: string, roles: string[]): Promise<void>;
}

const member = { roles: ["member"], active: true };
const STEPS: Step[] = [
  {
    name: "pushes the Users",
    run: async (idp) => {
      for (const person of PEOPLE) {
        const created = await idp.send("POST", "/Users", {
          schemas: [USER_SCHEMA],
          userName: `${person}@example.com`,
          externalId: `okta-${person}`,
          name: { givenName: person, familyName: "Example" },
          emails: [{ value: `${person}@example.com`, type: "work", primary: true }],
          active: true,
        });
        expect(created.status, JSON.stringify(created.json())).toBe(201);
      }
    },
    expected: { alice: member, bob: member, carol: member },
  },
  {
    name: "pushes two groups, empty, which an admin gives their roles",
    run: async (idp) => {
      for (const [name, roles] of [
        ["Engineering Admins", ["admin"]],
        ["Help Desk", ["support"]],
      ] as const) {
        const created = await idp.send("POST", "/Groups", { schemas: [GROUP], displayName: name, members: [] });
        expect(created.status, JSON.stringify(created.json())).toBe(201);
        await idp.grant(name, [...roles]);
      }
    },
    expected: { alice: member, bob: member, carol: member },
  },
  {
    name: "pushes the memberships",
    run: async (idp) => {
      const add = (group: string, people: Person[]) =>
        idp.send(
          "PATCH",
          `/Groups/${idp.group(group)}`,
          patchOf({ op: "add", path: "members", value: people.map((p) => ({ value: idp.user(p) })) }),
        );
      expect((await add("Engineering Admins", ["alice", "bob"])).status).toBe(204);
      expect((await add("Help Desk", ["carol"])).status).toBe(204);
    },
    expected: {
      alice: { roles: ["admin", "member"], active: true },
      bob: { roles: ["admin", "member"], active: true },
      carol: { roles: ["support", "member"], active: true },
    },
  },
  {
    name: "deactivates a leaver and takes it out of its group",
    run: async (idp) => {
      const bob = idp.user("bob");
      const off = await idp.send("PATCH", `/Users/${bob}`, patchOf({ op: "replace", value: { active: false } }));
      expect(off.status, JSON.stringify(off.json())).toBe(200);
      const out = await idp.send(
        "PATCH",
        `/Groups/${idp.group("Engineering Admins")}`,
        patchOf({ op: "remove", path: `members[value eq "${bob}"]` }),
      );
      expect(out.status).toBe(204);
    },
    expected: {
      alice: { roles: ["admin", "member"], active: true },
      bob: { roles: ["member"], active: false },
      carol: { roles: ["support", "member"], active: true },
    },
  },
  {
    name: "deletes a group",
    run: async (idp) => {
      expect((await idp.send("DELETE", `/Groups/${idp.group("Help Desk")}`)).status).toBe(204);
    },
    expected: {
      alice: { roles: ["admin", "member"], active: true },
      bob: { roles: ["member"], active: false },
      carol: member,
    },
  },
];

async function serviceAccountToken(scim: ScimServer): Promise<{ accountId: string; tokenId: string; token: string }> {
  const account = await scim.call("POST", "/ServiceAccounts", { userName: "okta-provisioning", roles: ["admin"] });
  expect(account.status, account.text).toBe(201);
  const accountId = account.json().id as string;
  const token = await scim.call("POST", `/ServiceAccounts/${accountId}/tokens`, { name: "Okta" });
  expect(token.status, token.text).toBe(201);
  return { accountId, tokenId: token.json().id, token: token.json().token };
}

async function auditOf(scim: ScimServer): Promise<AuditRecord[]> {
  const filter = encodeURIComponent('action sw "user." or action sw "group."');
  const answer = await scim.call("GET", `/audit?filter=${filter}&pageSize=200`);
  expect(answer.status, answer.text).toBe(200);
  return answer.json().data as AuditRecord[];
}

describe.each(DATABASES)("an identity provider's provisioning run on $name", ({ start }) => {
  const scim = useScimServer(start);

  it("leaves the roles the identity provider intended, and the audit trail names its service account", async () => {
    const { accountId, tokenId, token } = await serviceAccountToken(scim);
    const users = new Map<string, string>();
    const groups = new Map<string, string>();
    const idp: Idp = {
      async send(method, path, body) {
        const answer = await scim.call(method, path, body, { authorization: `Bearer ${token}` });
        const json = () => (answer.text === "" ? {} : answer.json());
        const id = answer.status === 201 ? (json().id as string) : undefined;
        if (id && path === "/Users") users.set(String(json().userName), id);
        if (id && path === "/Groups") groups.set(String(json().displayName), id);
        return { status: answer.status, json };
      },
      user: (person) => users.get(`${person}@example.com`) as string,
      group: (name) => groups.get(name) as string,
      async grant(name, roles) {
        const given = await scim.call(
          "PATCH",
          `/Groups/${groups.get(name)}`,
          patchOf({ op: "replace", path: `${ROLES_EXT}:roles`, value: roles }),
        );
        expect(given.status, given.text).toBe(204);
      },
    };
    for (const step of STEPS) {
      await step.run(idp);
      for (const person of PEOPLE) {
        const account = await findAccountById(scim.server.app.services.store.db, idp.user(person));
        expect({ roles: account?.roles, active: account?.active }, `${step.name}: ${person}`).toEqual(
          step.expected[person],
        );
      }
    }

    const records = await auditOf(scim);
    const byIdp = records.filter((record) => record.actor?.id === accountId);
    const byAdmin = records.filter((record) => record.actor?.id !== accountId);
    expect(byIdp.map((record) => record.action).sort()).toEqual(
      [
        ...["user.create", "user.create", "user.create"],
        ...["group.create", "group.create", "group.members", "group.members"],
        ...["user.disable", "group.members", "group.delete"],
      ].sort(),
    );
    for (const record of byIdp) {
      expect(record, record.action).toMatchObject({
        outcome: "success",
        actor: { userName: "okta-provisioning", apiTokenId: tokenId, apiTokenName: "Okta" },
      });
    }
    // an admin of bizctl gave the groups their roles: those records name the admin, not the service account
    expect(byAdmin.filter((record) => record.action.startsWith("group.")).map((record) => record.action)).toEqual([
      "group.roles",
      "group.roles",
    ]);
  });
});
