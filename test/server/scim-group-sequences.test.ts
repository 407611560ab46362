/**
 * Entra ID's and Okta's documented Group requests (test/fixtures/scim-group-sequences.ts),
 * replayed over a real socket on SQLite and PostgreSQL: each answers a status its document
 * allows, and after each the Users hold exactly the roles the identity provider intended once an
 * admin gave the group its roles, as every credential reads them.
 */
import { describe, expect, it } from "vitest";
import { findAccountById } from "../../src/server/store/users-repo.js";
import {
  ENTRA_APP_ROLE_PATCH,
  ENTRA_GROUP_SEQUENCE,
  OKTA_GROUP_SEQUENCE,
  type SequenceStep,
  USER_IDS,
} from "../fixtures/scim-group-sequences.js";
import { DATABASES, type ScimServer, useScimServer } from "../helpers/scim.js";
import { insertUser } from "../helpers/server.js";

const ROLES_EXT = "urn:bizctl:schemas:extension:roles:2.0:Group";
const PATCH_OP = "urn:ietf:params:scim:api:messages:2.0:PatchOp";

type Sample = keyof typeof USER_IDS;

interface Run {
  sequence: SequenceStep[];
  /** the roles the group is given by an admin of bizctl, right after the identity provider creates it */
  groupRoles: string[];
  /** by step name: each sample User's effective roles after it */
  expected: Record<string, Partial<Record<Sample, string[]>>>;
}

const RUNS: Record<string, Run> = {
  "Entra ID": {
    sequence: ENTRA_GROUP_SEQUENCE,
    groupRoles: ["support"],
    expected: {
      "Create Group": { entra: ["member"] },
      "Update Group [Add Members]": { entra: ["support", "member"] },
      "Update Group [Remove Members]": { entra: ["member"] },
      "Delete Group": { entra: ["member"] },
    },
  },
  Okta: {
    sequence: OKTA_GROUP_SEQUENCE,
    groupRoles: ["admin"],
    expected: {
      "Create Groups": { oktaFirst: ["member"], oktaSecond: ["member"], oktaPut: ["member"] },
      "Update specific Group membership": {
        oktaFirst: ["admin", "member"],
        oktaSecond: ["admin", "member"],
        oktaPut: ["member"],
      },
      "Update a specific Group (PUT)": { oktaFirst: ["member"], oktaSecond: ["member"], oktaPut: ["admin", "member"] },
      "Delete a specific Group": { oktaFirst: ["member"], oktaSecond: ["member"], oktaPut: ["member"] },
    },
  },
};

/** The request's text with the documents' sample ids made the run's. */
function substitute(text: string, ids: Map<string, string>): string {
  let out = text;
  for (const [from, to] of ids) out = out.split(from).join(to);
  return out;
}

async function rolesOf(scim: ScimServer, id: string) {
  return (await findAccountById(scim.server.app.services.store.db, id))?.roles;
}

describe.each(DATABASES)("the documented Group sequences on $name", ({ start }) => {
  const scim = useScimServer(start);

  it.each(Object.keys(RUNS))("%s: every step answers as documented and leaves the intended roles", async (idp) => {
    const run = RUNS[idp] as Run;
    const ids = new Map<string, string>();
    for (const [sample, documented] of Object.entries(USER_IDS)) {
      const user = await insertUser(scim.server.app, {
        userName: `${idp.replace(" ", "")}.${sample}`,
        password: "velvet harbour quartz 6620 meadow",
        roles: ["member"],
      });
      ids.set(documented, user.id);
    }
    const idOf = (sample: Sample) => ids.get(USER_IDS[sample]) as string;
    for (const step of run.sequence) {
      const path = substitute(step.path, ids);
      const body = step.body === undefined ? undefined : substitute(JSON.stringify(step.body), ids);
      const answer = await scim.call(step.method, path, body);
      expect(step.status, `${step.name}: ${answer.status} ${answer.text}`).toContain(answer.status);
      if (step.name.startsWith("Create")) {
        const group = answer.json().id as string;
        ids.set("{group}", group);
        const given = await scim.call("PATCH", `/Groups/${group}`, {
          schemas: [PATCH_OP],
          Operations: [{ op: "replace", path: `${ROLES_EXT}:roles`, value: run.groupRoles }],
        });
        expect(given.status, given.text).toBe(204);
      }
      if (step.method === "GET" && step.path.includes("filter=")) expect(answer.json().totalResults).toBe(1);
      if (step.path.includes("excludedAttributes=members")) {
        const groups = answer.json().Resources ?? [answer.json()];
        for (const group of groups) expect(group.members).toBeUndefined();
      }
      for (const [sample, roles] of Object.entries(run.expected[step.name] ?? {})) {
        expect(await rolesOf(scim, idOf(sample as Sample)), `${step.name}: ${sample}`).toEqual(roles);
      }
    }
  });

  it("takes Entra ID's app-role assignment in the User's roles as a direct role", async () => {
    const user = await insertUser(scim.server.app, {
      userName: "entra.app.role",
      password: "velvet harbour quartz 6620 meadow",
      roles: ["member"],
    });
    const answer = await scim.call("PATCH", `/Users/${user.id}`, ENTRA_APP_ROLE_PATCH);
    expect(answer.status, answer.text).toBe(200);
    expect(await rolesOf(scim, user.id)).toEqual(["support", "member"]);
  });
});
