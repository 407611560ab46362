/**
 * /Users and /Me follow the rules of /Resources: who may read and write which User, over a real
 * socket on SQLite and PostgreSQL; and a User made of every attribute /Schemas describes as
 * writable is accepted and read back as sent.
 */
import { beforeAll, describe, expect, it } from "vitest";
import {
  ACCOUNT_SCHEMA,
  type SchemaAttribute as Attribute,
  DATABASES,
  ENTERPRISE_SCHEMA,
  scimErrorOf,
  USER_SCHEMA,
  useScimServer,
} from "../helpers/scim.js";
import { insertUser, loginToken } from "../helpers/server.js";

const PASSWORD = "members passphrase that is long 77";

/** A value /Schemas says the attribute takes. */
function sample(attribute: Attribute, parent?: string): unknown {
  const one = (): unknown => {
    if (attribute.canonicalValues) return attribute.canonicalValues.at(-1);
    if (attribute.type === "complex") {
      return Object.fromEntries(
        (attribute.subAttributes ?? [])
          .filter((sub) => sub.mutability === "readWrite")
          .map((sub) => [sub.name, sample(sub, attribute.name)]),
      );
    }
    if (attribute.type === "boolean") return true;
    if (attribute.type === "reference") return "https://example.com/ref";
    if (attribute.type === "binary") return "TUlJRA==";
    if (parent === "emails" && attribute.name === "value") return "every.attribute@example.com";
    return `${parent ?? ""}${attribute.name}-sample`;
  };
  return attribute.multiValued ? [one()] : one();
}

describe.each(DATABASES)("/Users and /Me under the rules of /Resources ($name)", ({ start }) => {
  const scim = useScimServer(start);
  let member: { id: string; token: string };
  let support: { id: string; token: string };
  let consumerId: string;
  const as = (token: string) => ({ authorization: `Bearer ${token}` });

  beforeAll(async () => {
    const app = scim.server.app;
    const m = await insertUser(app, { userName: "mia.member", password: PASSWORD, roles: ["member"] });
    const s = await insertUser(app, { userName: "sam.support", password: PASSWORD, roles: ["support"] });
    member = { id: m.id, token: await loginToken(app, m.userName, PASSWORD) };
    support = { id: s.id, token: await loginToken(app, s.userName, PASSWORD) };
    const consumer = await scim.call("POST", "/Resources", { resourceType: "OAuthConsumer", name: "An app" });
    consumerId = consumer.json().id;
  });

  it("GET /Me is the caller's User, with where it lives; a member sees none of its account state", async () => {
    const answer = await scim.call("GET", "/Me", undefined, as(member.token));
    expect(answer.status, answer.text).toBe(200);
    expect(answer.headers["content-location"]).toBe(`/Users/${member.id}`);
    const me = answer.json();
    expect(me).toMatchObject({ id: member.id, userName: "mia.member", schemas: [USER_SCHEMA] });
    expect(me).not.toHaveProperty(ACCOUNT_SCHEMA);
    const admin = (await scim.call("GET", "/Me")).json();
    expect(admin[ACCOUNT_SCHEMA]).toMatchObject({ firstLogin: false, passwordState: "set", locked: false });
  });

  it.each([
    ["a member lists only its own User", () => member.token, () => [member.id]],
    ["support lists every User", () => support.token, () => [scim.server.admin.id, member.id, support.id]],
  ])("%s", async (_what, token, expected) => {
    const list = (await scim.call("GET", "/Users", undefined, as(token()))).json();
    expect(list.Resources.map((u: { id: string }) => u.id).sort()).toEqual(expected().sort());
  });

  type Who = "member" | "support" | "admin";
  /** [what, who sends it, the request (":member" stands for that User's id, ":consumer" for the OAuthConsumer's)] */
  type Refusal = [string, Who, [method: string, path: string, body?: unknown]];
  const refused = (status: number, code: string, rows: Refusal[]) =>
    rows.map(([what, who, request]) => [what, who, request, status, code] as const);
  const tokenOf = (who: Who) => ({ member: member.token, support: support.token, admin: scim.token })[who];
  const at = (path: string) =>
    path.replace(
      /:(\w+)/,
      (_, name: string) => ({ member: member.id, support: support.id, consumer: consumerId })[name]!,
    );

  it.each([
    ...refused(404, "not_found", [
      ["a member reads another User: 404", "member", ["GET", "/Users/:support"]],
      ["an OAuthConsumer is no User: GET 404", "admin", ["GET", "/Users/:consumer"]],
      ["nor DELETE", "admin", ["DELETE", "/Users/:consumer"]],
      ["nor PUT", "admin", ["PUT", "/Users/:consumer", { userName: "x" }]],
    ]),
    ...refused(403, "forbidden", [
      [
        "a member changes its own displayName through /Me: 403, as through /Resources",
        "member",
        ["PUT", "/Me", { userName: "mia.member", displayName: "Mia" }],
      ],
      ["support creates a User: 403", "support", ["POST", "/Users", { userName: "new.one" }]],
      ["support deletes an ordinary User: 403", "support", ["DELETE", "/Users/:member"]],
    ]),
    ...refused(400, "validation_failed", [
      [
        "a body of another type on /Users: 400",
        "admin",
        ["POST", "/Users", { resourceType: "OAuthConsumer", name: "x" }],
      ],
      [
        "an attribute the schema does not know: 400",
        "admin",
        ["POST", "/Users", { userName: "x.y", "urn:example:ext:2.0:User": { tag: "1" } }],
      ],
    ]),
  ])("%s", async (_what, who, [method, path, body], status, code) => {
    const before = await scim.call("GET", "/Resources?count=500");
    expect(scimErrorOf(await scim.call(method, at(path), body, as(tokenOf(who))), status).code).toBe(code);
    expect((await scim.call("GET", "/Resources?count=500")).text).toBe(before.text);
  });

  it("an admin replaces its own User through /Me", async () => {
    const me = (await scim.call("GET", "/Me")).json();
    const answer = await scim.call("PUT", "/Me", { ...me, displayName: "Ada" });
    expect(answer.status, answer.text).toBe(200);
    expect(answer.json()).toMatchObject({ id: scim.server.admin.id, displayName: "Ada", roles: me.roles });
  });

  it("a User of every attribute /Schemas describes as writable is accepted and read back as sent", async () => {
    const schemas = (await scim.call("GET", "/Schemas")).json().Resources as { id: string; attributes: Attribute[] }[];
    const writable = (id: string) =>
      Object.fromEntries(
        (schemas.find((s) => s.id === id)?.attributes ?? [])
          .filter((a) => a.mutability === "readWrite")
          .map((a) => [a.name, sample(a)]),
      );
    const user = { ...writable(USER_SCHEMA), [ENTERPRISE_SCHEMA]: writable(ENTERPRISE_SCHEMA) };
    expect(Object.keys(user).length).toBeGreaterThanOrEqual(20);
    const created = await scim.call("POST", "/Users", { schemas: [USER_SCHEMA, ENTERPRISE_SCHEMA], ...user });
    expect(created.status, created.text).toBe(201);
    const read = (await scim.call("GET", `/Users/${created.json().id}`)).json();
    expect(read).toMatchObject(user);
  });
});
