/**
 * A property, on both stores: through any sequence of membership changes, group role changes,
 * direct role changes and group deletions, every User's effective roles (what each credential
 * reads) equal those of an independent model: its direct roles joined with its groups' roles.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { findAccountById } from "../../src/server/store/users-repo.js";
import { STORES } from "../helpers/postgres.js";
import { insertUser, useTestServer } from "../helpers/server.js";

const GROUP = "urn:ietf:params:scim:schemas:core:2.0:Group";
const ROLES_EXT = "urn:bizctl:schemas:extension:roles:2.0:Group";
const PATCH_OP = "urn:ietf:params:scim:api:messages:2.0:PatchOp";
const ROLES = ["admin", "support", "member"] as const;
type Role = (typeof ROLES)[number];

const USERS = 4;
const GROUPS = 3;

type Change =
  | { kind: "add" | "remove"; group: number; user: number }
  | { kind: "groupRoles"; group: number; roles: Role[] }
  | { kind: "directRoles"; user: number; roles: Role[] }
  | { kind: "deleteGroup"; group: number };

const roleSet = fc.subarray([...ROLES]);
const user = fc.nat(USERS - 1);
const group = fc.nat(GROUPS - 1);
const change: fc.Arbitrary<Change> = fc.oneof(
  fc.record({ kind: fc.constantFrom("add" as const, "remove" as const), group, user }),
  fc.record({ kind: fc.constant("groupRoles" as const), group, roles: roleSet }),
  fc.record({ kind: fc.constant("directRoles" as const), user, roles: fc.subarray([...ROLES], { minLength: 1 }) }),
  fc.record({ kind: fc.constant("deleteGroup" as const), group }),
);

/** The model: what each User's effective roles should be, known without the server. */
class Model {
  direct: Role[][] = Array.from({ length: USERS }, () => ["member"]);
  /** undefined: the group was deleted */
  groups: ({ roles: Role[]; members: Set<number> } | undefined)[] = Array.from({ length: GROUPS }, () => ({
    roles: [],
    members: new Set<number>(),
  }));

  effective(user: number): Role[] {
    const held = new Set<Role>(this.direct[user]);
    for (const group of this.groups) if (group?.members.has(user)) for (const role of group.roles) held.add(role);
    return ROLES.filter((role) => held.has(role));
  }
}

describe.each(STORES)("effective roles against a model on %s", (_store, start) => {
  const server = useTestServer({}, start);
  let run = 0;

  it("agree after every change of a random sequence", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(change, { minLength: 1, maxLength: 12 }), async (changes) => {
        run++;
        const model = new Model();
        const users: string[] = [];
        for (let index = 0; index < USERS; index++) {
          const made = await insertUser(server.app, {
            userName: `model.${run}.${index}`,
            password: "velvet harbour quartz 6620 meadow",
            roles: ["member"],
          });
          users.push(made.id);
        }
        const groups: string[] = [];
        for (let index = 0; index < GROUPS; index++) {
          const made = await server.call("POST", "/Groups", { schemas: [GROUP], displayName: `Model ${run}.${index}` });
          expect(made.statusCode, made.body).toBe(201);
          groups.push((made.json() as { id: string }).id);
        }
        const patchGroup = (index: number, operation: Record<string, unknown>) =>
          server.call("PATCH", `/Groups/${groups[index]}`, { schemas: [PATCH_OP], Operations: [operation] });
        for (const step of changes) {
          const target = "group" in step ? model.groups[step.group] : undefined;
          if ("group" in step && target === undefined) continue; // a deleted group is gone for the IdP too
          let answer: { statusCode: number; body: string };
          if (step.kind === "add") {
            answer = await patchGroup(step.group, { op: "add", path: "members", value: [{ value: users[step.user] }] });
            target?.members.add(step.user);
          } else if (step.kind === "remove") {
            answer = await patchGroup(step.group, { op: "remove", path: `members[value eq "${users[step.user]}"]` });
            target?.members.delete(step.user);
          } else if (step.kind === "groupRoles") {
            answer = await patchGroup(step.group, { op: "replace", path: `${ROLES_EXT}:roles`, value: step.roles });
            if (target) target.roles = step.roles;
          } else if (step.kind === "deleteGroup") {
            answer = await server.call("DELETE", `/Groups/${groups[step.group]}`);
            model.groups[step.group] = undefined;
          } else if (step.kind === "directRoles") {
            const roles = step.roles.map((value) => ({ value }));
            answer = await server.call("PATCH", `/Users/${users[step.user]}`, {
              schemas: [PATCH_OP],
              Operations: [{ op: "replace", path: "roles", value: roles }],
            });
            model.direct[step.user] = step.roles;
          } else throw new Error(`no such change: ${JSON.stringify(step)}`);
          expect(answer.statusCode, `${JSON.stringify(step)}: ${answer.body}`).toBeLessThan(300);
          for (let index = 0; index < USERS; index++) {
            const account = await findAccountById(server.app.services.store.db, users[index] as string);
            expect(account?.roles, `after ${JSON.stringify(step)}: user ${index}`).toEqual(model.effective(index));
          }
        }
      }),
      { numRuns: 25 },
    );
  }, 120_000);
});
