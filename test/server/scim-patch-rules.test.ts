/**
 * A PATCH is written as the PUT of its result would be, so no rule can be bypassed by it: the
 * roles and the help-desk rules, delegated credentials, the last admin, uniqueness, validation,
 * and the audit trail. Over a real socket, on SQLite and PostgreSQL, through /Users, /Me and
 * /Resources alike. A refusal changes nothing.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { authHeader, createConsumer, injectFlow, signer } from "../helpers/oauth.js";
import { DATABASES, PATCH_OP, type ScimServer, scimErrorOf, startScimServer } from "../helpers/scim.js";
import { insertUser, loginToken } from "../helpers/server.js";

const PASSWORD = "a passphrase long enough for the policy 31";
const TEMPORARY = "another long temporary passphrase 2042";

type Op = { op: string; path?: string; value?: unknown };
const patch = (...Operations: Op[]) => ({ schemas: [PATCH_OP], Operations });

interface World {
  scim: ScimServer;
  ids: Record<"admin" | "member" | "support" | "ordinary" | "device", string>;
  tokens: Record<"admin" | "member" | "support", string>;
}

/** [what, who calls, the path, the operations, the status, the problem code] */
const REFUSED: [string, "admin" | "member" | "support", (w: World) => string, Op[], number, string][] = [
  [
    "a member adds the admin role to itself through /Me",
    "member",
    () => "/Me",
    [{ op: "add", path: "roles", value: [{ value: "admin" }] }],
    403,
    "forbidden",
  ],
  [
    "a member replaces its roles through /Users/{id}",
    "member",
    (w) => `/Users/${w.ids.member}`,
    [{ op: "replace", path: "roles", value: [{ value: "admin" }] }],
    403,
    "forbidden",
  ],
  [
    "a member changes its roles through /Resources/{id}",
    "member",
    (w) => `/Resources/${w.ids.member}`,
    [{ op: "replace", path: 'roles[value eq "member"].value', value: "admin" }],
    403,
    "forbidden",
  ],
  [
    "a member changes its own displayName (members change no User)",
    "member",
    () => "/Me",
    [{ op: "replace", path: "displayName", value: "Me" }],
    403,
    "forbidden",
  ],
  [
    "a member patches another User: it cannot even see it",
    "member",
    (w) => `/Users/${w.ids.ordinary}`,
    [{ op: "replace", path: "active", value: false }],
    404,
    "not_found",
  ],
  [
    "support disables an admin",
    "support",
    (w) => `/Users/${w.ids.admin}`,
    [{ op: "Replace", path: "active", value: "False" }],
    403,
    "forbidden",
  ],
  [
    "support makes an ordinary user an admin",
    "support",
    (w) => `/Users/${w.ids.ordinary}`,
    [{ op: "add", path: "roles", value: [{ value: "admin" }] }],
    403,
    "forbidden",
  ],
  [
    "support changes a custom resource",
    "support",
    (w) => `/Resources/${w.ids.device}`,
    [{ op: "replace", path: "label", value: "x" }],
    403,
    "forbidden",
  ],
  [
    "the last admin disables itself",
    "admin",
    () => "/Me",
    [{ op: "replace", path: "active", value: false }],
    409,
    "last_admin",
  ],
  [
    "the last admin drops its admin role",
    "admin",
    (w) => `/Users/${w.ids.admin}`,
    [{ op: "remove", path: 'roles[value eq "admin"]' }],
    409,
    "last_admin",
  ],
  [
    "a userName another user has (in another case)",
    "admin",
    (w) => `/Users/${w.ids.ordinary}`,
    [{ op: "replace", path: "userName", value: "SAM.SUPPORT" }],
    409,
    "conflict",
  ],
  [
    "removing the userName",
    "admin",
    (w) => `/Users/${w.ids.ordinary}`,
    [{ op: "remove", path: "userName" }],
    400,
    "validation_failed",
  ],
  [
    "an e-mail that is none",
    "admin",
    (w) => `/Users/${w.ids.ordinary}`,
    [{ op: "add", path: 'emails[type eq "work"].value', value: "not an address" }],
    400,
    "validation_failed",
  ],
  [
    "a weak temporary password",
    "admin",
    (w) => `/Users/${w.ids.ordinary}`,
    [{ op: "replace", path: "password", value: "short" }],
    400,
    "weak_password",
  ],
  [
    "a passwordHash, which only a create takes",
    "admin",
    (w) => `/Users/${w.ids.ordinary}`,
    [{ op: "add", path: "passwordHash", value: "$2b$10$abcdefghijklmnopqrstuv" }],
    400,
    "validation_failed",
  ],
];

describe.each(DATABASES)("PATCH under the rules of PUT ($name)", ({ start }) => {
  const w = { ids: {}, tokens: {} } as World;
  const as = (who: keyof World["tokens"]) => ({ authorization: `Bearer ${w.tokens[who]}` });
  const state = async () => (await w.scim.call("GET", "/Resources?count=500&sortBy=id")).text;

  beforeAll(async () => {
    w.scim = await startScimServer(start);
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
  afterAll(async () => w.scim?.close());

  it.each(REFUSED)("refuses %s", async (_what, who, path, operations, status, code) => {
    const before = await state();
    const answer = await w.scim.call("PATCH", path(w), patch(...operations), as(who));
    const error = path(w).startsWith("/Resources")
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
