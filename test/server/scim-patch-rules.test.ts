/**
 * A PATCH is written as the PUT of its result would be, so no rule can be bypassed by it: the
 * roles and the help-desk rules, delegated credentials, the last admin, uniqueness, validation,
 * and the audit trail. Over a real socket, on SQLite and PostgreSQL, through /Users, /Me and
 * /Resources alike. A refusal changes nothing.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { authHeader, createConsumer, injectFlow, signer } from "../helpers/oauth.js";
import {
  DATABASES,
  type PatchOperation as Op,
  PATCH_OP,
  patchOf as patch,
  type ScimServer,
  scimErrorOf,
  useScimServer,
} from "../helpers/scim.js";
import { insertUser, loginToken } from "../helpers/server.js";

const PASSWORD = "a passphrase long enough for the policy 31";
const TEMPORARY = "another long temporary passphrase 2042";

interface World {
  scim: ScimServer;
  ids: Record<"admin" | "member" | "support" | "ordinary" | "device", string>;
  tokens: Record<"admin" | "member" | "support", string>;
}

type Who = "admin" | "member" | "support";
/** [what, who calls, the path (":member" stands for that user's id), the operations, the status, the problem code] */
type Refusal = [string, Who, string, Op[], number, string];

/** [what, the path, the operation]: each sent by `who`, each refused with this status and problem code */
const refused = (who: Who, status: number, code: string, rows: [string, string, Op][]): Refusal[] =>
  rows.map(([what, path, operation]) => [what, who, path, [operation], status, code]);

const REFUSED: Refusal[] = [
  ...refused("member", 403, "forbidden", [
    [
      "a member adds the admin role to itself through /Me",
      "/Me",
      { op: "add", path: "roles", value: [{ value: "admin" }] },
    ],
    [
      "a member replaces its roles through /Users/{id}",
      "/Users/:member",
      { op: "replace", path: "roles", value: [{ value: "admin" }] },
    ],
    [
      "a member changes its roles through /Resources/{id}",
      "/Resources/:member",
      { op: "replace", path: 'roles[value eq "member"].value', value: "admin" },
    ],
    [
      "a member changes its own displayName (members change no User)",
      "/Me",
      { op: "replace", path: "displayName", value: "Me" },
    ],
  ]),
  ...refused("member", 404, "not_found", [
    [
      "a member patches another User: it cannot even see it",
      "/Users/:ordinary",
      { op: "replace", path: "active", value: false },
    ],
  ]),
  ...refused("support", 403, "forbidden", [
    ["support disables an admin", "/Users/:admin", { op: "Replace", path: "active", value: "False" }],
    [
      "support makes an ordinary user an admin",
      "/Users/:ordinary",
      { op: "add", path: "roles", value: [{ value: "admin" }] },
    ],
    ["support changes a custom resource", "/Resources/:device", { op: "replace", path: "label", value: "x" }],
  ]),
  ...refused("admin", 409, "last_admin", [
    ["the last admin disables itself", "/Me", { op: "replace", path: "active", value: false }],
    ["the last admin drops its admin role", "/Users/:admin", { op: "remove", path: 'roles[value eq "admin"]' }],
  ]),
  ...refused("admin", 409, "conflict", [
    [
      "a userName another user has (in another case)",
      "/Users/:ordinary",
      { op: "replace", path: "userName", value: "SAM.SUPPORT" },
    ],
  ]),
  ...refused("admin", 400, "validation_failed", [
    ["removing the userName", "/Users/:ordinary", { op: "remove", path: "userName" }],
    [
      "an e-mail that is none",
      "/Users/:ordinary",
      { op: "add", path: 'emails[type eq "work"].value', value: "not an address" },
    ],
    [
      "a passwordHash, which only a create takes",
      "/Users/:ordinary",
      { op: "add", path: "passwordHash", value: "$2b$10$abcdefghijklmnopqrstuv" },
    ],
  ]),
  ...refused("admin", 400, "weak_password", [
    ["a weak temporary password", "/Users/:ordinary", { op: "replace", path: "password", value: "short" }],
  ]),
];

describe.each(DATABASES)("PATCH under the rules of PUT ($name)", ({ start }) => {
  const w = { scim: useScimServer(start), ids: {}, tokens: {} } as World;
  const as = (who: keyof World["tokens"]) => ({ authorization: `Bearer ${w.tokens[who]}` });
  const at = (path: string) => path.replace(/:(\w+)/, (_, key: keyof World["ids"]) => w.ids[key]);
  const state = async () => (await w.scim.call("GET", "/Resources?count=500&sortBy=id")).text;

  beforeAll(async () => {
    const app = w.scim.server.app;
    for (const [key, userName, role] of [
      ["member", "mia.member", "member"],
      ["support", "sam.support", "support"],
      ["ordinary", "otto.ordinary", "member"],
    ] as const) {
      const user = await insertUser(app, { userName, password: PASSWORD, roles: [role] });
      w.ids[key] = user.id;
      if (key !== "ordinary") w.tokens[key] = await loginToken(app, userName, PASSWORD);
    }
    w.ids.admin = w.scim.server.admin.id;
    w.tokens.admin = w.scim.token;
    const device = await w.scim.call("POST", "/Resources", { resourceType: "Device", label: "printer" });
    w.ids.device = device.json().id;
  });

  it.each(REFUSED)("refuses %s", async (_what, who, path, operations, status, code) => {
    const before = await state();
    const answer = await w.scim.call("PATCH", at(path), patch(...operations), as(who));
    const error = path.startsWith("/Resources")
      ? (() => {
          expect(answer.status, answer.text).toBe(status);
          return answer.json();
        })()
      : scimErrorOf(answer, status);
    expect(error.code).toBe(code);
    expect(await state()).toBe(before);
  });

  it("records a refused role change in the audit trail, as a refused PUT is", async () => {
    await w.scim.call("PATCH", "/Me", patch({ op: "add", path: "roles", value: [{ value: "admin" }] }), as("member"));
    const filter = encodeURIComponent(`target.id eq "${w.ids.member}" and action eq "user.roles"`);
    const records = (await w.scim.call("GET", `/audit?filter=${filter}`)).json().data;
    expect(records[0]).toMatchObject({ outcome: "forbidden", actor: { id: w.ids.member } });
  });

  it("lets support disable and enable an ordinary user, and set a temporary password, recorded", async () => {
    const path = `/Users/${w.ids.ordinary}`;
    const disabled = await w.scim.call(
      "PATCH",
      path,
      patch({ op: "Replace", path: "active", value: "False" }),
      as("support"),
    );
    expect(disabled.status, disabled.text).toBe(200);
    expect(disabled.json().active).toBe(false);
    const enabled = await w.scim.call("PATCH", path, patch({ op: "replace", value: { active: true } }), as("support"));
    expect(enabled.json().active).toBe(true);
    const password = await w.scim.call(
      "PATCH",
      path,
      patch({ op: "replace", path: "password", value: TEMPORARY }),
      as("support"),
    );
    expect(password.status, password.text).toBe(200);
    expect(password.text).not.toContain(TEMPORARY);
    expect(password.json()["urn:bizctl:schemas:extension:account:2.0:User"]).toMatchObject({ firstLogin: true });
    const filter = encodeURIComponent(`target.id eq "${w.ids.ordinary}" and actor.id eq "${w.ids.support}"`);
    const actions = (await w.scim.call("GET", `/audit?filter=${filter}`))
      .json()
      .data.map((r: { action: string }) => r.action);
    expect(actions).toEqual(expect.arrayContaining(["user.disable", "user.enable", "password.set"]));
  });

  it("refuses an application acting for the admin (OAuth token credentials) a password, as PUT does", async () => {
    const app = w.scim.server.app;
    const consumer = await createConsumer(app, w.scim.token);
    const { access } = await injectFlow(app, consumer, w.scim.token);
    const path = `/Users/${w.ids.ordinary}`;
    const signed = (method: string) => ({
      authorization: authHeader(signer(consumer), { method, url: `${w.scim.base}${path}` }, access),
    });
    const before = await state();
    const refused = await w.scim.call(
      "PATCH",
      path,
      patch({ op: "replace", path: "password", value: TEMPORARY }),
      signed("PATCH"),
    );
    expect(scimErrorOf(refused, 403).code).toBe("forbidden");
    expect(await state()).toBe(before);
    // the same application may change the data the admin may change
    const titled = await w.scim.call(
      "PATCH",
      path,
      patch({ op: "add", path: "title", value: "Clerk" }),
      signed("PATCH"),
    );
    expect(titled.status, titled.text).toBe(200);
  });

  it("loses no operation of PATCHes sent at once without If-Match: each applies to the version it is written on", async () => {
    const path = `/Users/${w.ids.ordinary}`;
    const numbers = Array.from({ length: 30 }, (_, i) => `555-01${String(i).padStart(2, "0")}`);
    const answers = await Promise.all(
      numbers.map((value) =>
        w.scim.call("PATCH", path, patch({ op: "add", path: "phoneNumbers", value: [{ value }] })),
      ),
    );
    expect(answers.map((answer) => answer.status)).toEqual(numbers.map(() => 200));
    const user = (await w.scim.call("GET", path)).json();
    expect(user.phoneNumbers.map((p: { value: string }) => p.value).sort()).toEqual(numbers);
  });

  it.each([
    [
      "a body without the PatchOp schema",
      { schemas: [], Operations: [{ op: "add", path: "title", value: "x" }] },
      "invalidSyntax",
    ],
    ["an operation that is none", patch({ op: "copy", path: "title", value: "x" }), "invalidSyntax"],
    ["no operations", { schemas: [PATCH_OP], Operations: [] }, "invalidValue"],
    ["a body that is not JSON", "{", "invalidSyntax"],
  ])("refuses %s: 400 with SCIM's error type", async (_what, body, scimType) => {
    const answer = await w.scim.call("PATCH", `/Users/${w.ids.ordinary}`, body);
    expect(scimErrorOf(answer, 400, scimType).code).toBe("validation_failed");
  });
});
