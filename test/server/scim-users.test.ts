/**
 * /Users and /Me follow the rules of /Resources: who may read and write which User, over a real
 * socket on SQLite and PostgreSQL; and a User made of every attribute /Schemas describes as
 * writable is accepted and read back as sent.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  DATABASES,
  ENTERPRISE_SCHEMA,
  type ScimServer,
  scimErrorOf,
  startScimServer,
  USER_SCHEMA,
} from "../helpers/scim.js";
import { insertUser, loginToken } from "../helpers/server.js";

const ACCOUNT_SCHEMA = "urn:bizctl:schemas:extension:account:2.0:User";
const PASSWORD = "members passphrase that is long 77";

interface Attribute {
  name: string;
  type: string;
  multiValued: boolean;
  mutability: string;
  canonicalValues?: string[];
  subAttributes?: Attribute[];
}

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
  let scim: ScimServer;
  let member: { id: string; token: string };
  let support: { id: string; token: string };
  let consumerId: string;
  const as = (token: string) => ({ authorization: `Bearer ${token}` });

  beforeAll(async () => {
    scim = await startScimServer(start);
    const app = scim.server.app;
    const m = await insertUser(app, { userName: "mia.member", password: PASSWORD, roles: ["member"] });
    const s = await insertUser(app, { userName: "sam.support", password: PASSWORD, roles: ["support"] });
    member = { id: m.id, token: await loginToken(app, m.userName, PASSWORD) };
    support = { id: s.id, token: await loginToken(app, s.userName, PASSWORD) };
    const consumer = await scim.call("POST", "/Resources", { resourceType: "OAuthConsumer", name: "An app" });
    consumerId = consumer.json().id;
  });
  afterAll(async () => scim?.close());

  it("GET /Me is the caller's User, with where it lives; a member sees firstLogin of its account state only", async () => {
    const answer = await scim.call("GET", "/Me", undefined, as(member.token));
    expect(answer.status, answer.text).toBe(200);
    expect(answer.headers["content-location"]).toBe(`/Users/${member.id}`);
    const me = answer.json();
    expect(me).toMatchObject({ id: member.id, userName: "mia.member", schemas: [USER_SCHEMA, ACCOUNT_SCHEMA] });
    expect(me[ACCOUNT_SCHEMA]).toEqual({ firstLogin: false });
    const admin = (await scim.call("GET", "/Me")).json();
    expect(admin[ACCOUNT_SCHEMA]).toMatchObject({ firstLogin: false, locked: false });
  });

  it.each([
    ["a member lists only its own User", () => member.token, () => [member.id]],
    ["support lists every User", () => support.token, () => [scim.server.admin.id, member.id, support.id]],
  ])("%s", async (_what, token, expected) => {
    const list = (await scim.call("GET", "/Users", undefined, as(token()))).json();
    expect(list.Resources.map((u: { id: string }) => u.id).sort()).toEqual(expected().sort());
  });

  it.each([
    ["a member reads another User: 404", () => ["GET", `/Users/${support.id}`], () => member.token, 404, "not_found"],
    [
      "a member changes its own displayName through /Me: 403, as through /Resources",
      () => ["PUT", "/Me", { userName: "mia.member", displayName: "Mia" }],
      () => member.token,
      403,
      "forbidden",
    ],
    [
      "support creates a User: 403",
      () => ["POST", "/Users", { userName: "new.one" }],
      () => support.token,
      403,
      "forbidden",
    ],
    [
      "support deletes an ordinary User: 403",
      () => ["DELETE", `/Users/${member.id}`],
      () => support.token,
      403,
      "forbidden",
    ],
    ["an OAuthConsumer is no User: GET 404", () => ["GET", `/Users/${consumerId}`], () => scim.token, 404, "not_found"],
    ["nor DELETE", () => ["DELETE", `/Users/${consumerId}`], () => scim.token, 404, "not_found"],
    ["nor PUT", () => ["PUT", `/Users/${consumerId}`, { userName: "x" }], () => scim.token, 404, "not_found"],
    [
      "a body of another type on /Users: 400",
      () => ["POST", "/Users", { resourceType: "OAuthConsumer", name: "x" }],
      () => scim.token,
      400,
      "validation_failed",
    ],
    [
      "an attribute the schema does not know: 400",
      () => ["POST", "/Users", { userName: "x.y", "urn:example:ext:2.0:User": { tag: "1" } }],
      () => scim.token,
      400,
      "validation_failed",
    ],
  ] as const)("%s", async (_what, request, token, status, code) => {
    const [method, path, body] = request() as [string, string, unknown?];
    const before = await scim.call("GET", "/Resources?count=500");
    expect(scimErrorOf(await scim.call(method, path, body, as(token())), status).code).toBe(code);
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
