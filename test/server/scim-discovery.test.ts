/**
 * The SCIM discovery endpoints (RFC 7644 section 4, RFC 7643 sections 5-7) and the SCIM wire
 * (media type, error bodies, query parameter names in any case), over a real socket.
 */
import { describe, expect, it } from "vitest";
import { OAuthConsumerInput, UserInput } from "../../src/contract/resources.js";
import {
  ACCOUNT_SCHEMA,
  type SchemaAttribute as Attribute,
  DATABASES,
  ENTERPRISE_SCHEMA,
  LIST_RESPONSE,
  SCIM_MEDIA_TYPE,
  scimErrorOf,
  USER_SCHEMA,
  useScimServer,
} from "../helpers/scim.js";

const CONSUMER_SCHEMA = "urn:bizctl:schemas:OAuthConsumer";
const GROUP_SCHEMA = "urn:ietf:params:scim:schemas:core:2.0:Group";
const GROUP_ROLES_SCHEMA = "urn:bizctl:schemas:extension:roles:2.0:Group";

describe.each(DATABASES)("SCIM discovery and wire ($name)", ({ start }) => {
  const scim = useScimServer(start);

  const anonymous = (path: string) => scim.call("GET", path, undefined, { authorization: "" });

  it.each([
    ["/ServiceProviderConfig"],
    ["/ResourceTypes"],
    ["/ResourceTypes/User"],
    ["/Schemas"],
    [`/Schemas/${USER_SCHEMA}`],
  ])("GET %s needs no credential and answers application/scim+json", async (path) => {
    const answer = await anonymous(path);
    expect(answer.status, answer.text).toBe(200);
    expect(answer.headers["content-type"]).toBe(`${SCIM_MEDIA_TYPE}; charset=utf-8`);
  });

  it("/ServiceProviderConfig tells what the server does (RFC 7643 section 5)", async () => {
    const config = (await anonymous("/ServiceProviderConfig")).json();
    expect(config).toMatchObject({
      schemas: ["urn:ietf:params:scim:schemas:core:2.0:ServiceProviderConfig"],
      patch: { supported: true },
      bulk: { supported: true, maxOperations: 1000, maxPayloadSize: 1024 * 1024 },
      filter: { supported: true, maxResults: 500 },
      changePassword: { supported: true },
      sort: { supported: true },
      etag: { supported: true },
      meta: { resourceType: "ServiceProviderConfig", location: "/ServiceProviderConfig" },
    });
    expect(config.authenticationSchemes.map((s: { type: string }) => s.type)).toEqual(["oauthbearertoken", "oauth"]);
  });

  it("/ResourceTypes lists User at /Users with its extensions, Group at /Groups, and OAuthConsumer (RFC 7643 section 6)", async () => {
    const list = (await anonymous("/ResourceTypes")).json();
    expect(list).toMatchObject({ schemas: [LIST_RESPONSE], totalResults: 3, startIndex: 1, itemsPerPage: 3 });
    const user = list.Resources[0];
    expect(user).toEqual({
      schemas: ["urn:ietf:params:scim:schemas:core:2.0:ResourceType"],
      id: "User",
      name: "User",
      endpoint: "/Users",
      description: "User Account",
      schema: USER_SCHEMA,
      schemaExtensions: [
        { schema: ENTERPRISE_SCHEMA, required: false },
        { schema: ACCOUNT_SCHEMA, required: false },
      ],
      meta: { resourceType: "ResourceType", location: "/ResourceTypes/User" },
    });
    expect(list.Resources[1]).toMatchObject({
      id: "Group",
      endpoint: "/Groups",
      schema: GROUP_SCHEMA,
      schemaExtensions: [{ schema: GROUP_ROLES_SCHEMA, required: false }],
    });
    expect(list.Resources[2]).toMatchObject({ id: "OAuthConsumer", schema: CONSUMER_SCHEMA });
    for (const name of ["User", "user", "USER"])
      expect((await anonymous(`/ResourceTypes/${name}`)).json()).toEqual(user);
    scimErrorOf(await anonymous("/ResourceTypes/Role"), 404);
  });

  it("/Schemas describes every attribute the contract accepts, in the schema it belongs to (RFC 7643 section 7)", async () => {
    const list = (await anonymous("/Schemas")).json();
    expect(list.schemas).toEqual([LIST_RESPONSE]);
    const ids = list.Resources.map((schema: { id: string }) => schema.id);
    expect(ids).toEqual([
      USER_SCHEMA,
      ENTERPRISE_SCHEMA,
      ACCOUNT_SCHEMA,
      GROUP_SCHEMA,
      GROUP_ROLES_SCHEMA,
      CONSUMER_SCHEMA,
    ]);
    const names = (id: string) =>
      list.Resources.find((schema: { id: string }) => schema.id === id).attributes.map((a: Attribute) => a.name);
    const envelope = ["resourceType", "schemas", "externalId", "id", "meta"];
    const described = [...names(USER_SCHEMA), ...names(ENTERPRISE_SCHEMA), ...names(ACCOUNT_SCHEMA)];
    const accepted = Object.keys(UserInput.properties).filter((name) => !envelope.includes(name));
    // each accepted attribute exactly once, and the account state beside them (read-only)
    expect(accepted.filter((name) => described.filter((d) => d === name).length !== 1)).toEqual([]);
    expect(described.filter((name) => !accepted.includes(name)).sort()).toEqual(
      [
        "groups",
        "failedLogins",
        "invited",
        "lastLogin",
        "locked",
        "lockedUntil",
        "mfaEnabled",
        "openSessions",
        "passwordChangedAt",
        "passwordState",
        "serviceAccount",
      ].sort(),
    );
    expect(names(ENTERPRISE_SCHEMA)).toEqual([
      "employeeNumber",
      "costCenter",
      "organization",
      "division",
      "department",
      "manager",
    ]);
    expect(names(CONSUMER_SCHEMA)).toEqual(
      Object.keys(OAuthConsumerInput.properties).filter((name) => !envelope.includes(name)),
    );
  });

  it.each([
    ["userName", { type: "string", required: true, uniqueness: "server", caseExact: false, mutability: "readWrite" }],
    ["password", { type: "string", mutability: "writeOnly", returned: "never" }],
    ["active", { type: "boolean", multiValued: false }],
    ["emails", { type: "complex", multiValued: true }],
    ["roles", { type: "complex", multiValued: true }],
    ["name", { type: "complex", multiValued: false }],
  ])("the User schema describes %s", async (name, expected) => {
    const schema = (await anonymous(`/Schemas/${USER_SCHEMA}`)).json();
    const attribute = schema.attributes.find((a: Attribute) => a.name === name) as Attribute;
    expect(attribute).toMatchObject(expected);
    expect(typeof attribute.description).toBe("string");
  });

  it("describes sub-attributes: emails' value, type and primary; the roles bizctl knows", async () => {
    const schema = (await anonymous(`/Schemas/${USER_SCHEMA.toUpperCase()}`)).json();
    const byName = (name: string) => schema.attributes.find((a: Attribute) => a.name === name) as Attribute;
    expect(byName("emails").subAttributes?.map((a) => [a.name, a.type])).toEqual([
      ["value", "string"],
      ["display", "string"],
      ["type", "string"],
      ["primary", "boolean"],
    ]);
    expect(byName("roles").subAttributes?.[0]).toMatchObject({
      name: "value",
      canonicalValues: ["admin", "support", "member"],
    });
    const account = (await anonymous(`/Schemas/${ACCOUNT_SCHEMA}`)).json();
    expect(account.attributes.every((a: Attribute) => a.mutability !== "readWrite")).toBe(true);
    scimErrorOf(await anonymous("/Schemas/urn:ietf:params:scim:schemas:core:2.0:Role"), 404);
  });

  it.each([
    ["camelCase, as SCIM writes them", "sortBy=userName&sortOrder=descending&startIndex=1&count=1"],
    ["lower case", "sortby=userName&sortorder=descending&startindex=1&count=1"],
    ["upper case", "SORTBY=userName&SORTORDER=descending&STARTINDEX=1&COUNT=1"],
  ])("/Resources reads query parameter names in any case: %s", async (_what, query) => {
    const answer = await scim.call("GET", `/Resources?resourceTypes=User&${query}`);
    expect(answer.status, answer.text).toBe(200);
    expect(answer.json()).toMatchObject({ totalResults: 1, itemsPerPage: 1, startIndex: 1 });
  });

  it("a parameter given twice in two cases is two values: 400", async () => {
    const answer = await scim.call("GET", "/Resources?sortBy=userName&sortby=id");
    expect(answer.status).toBe(400);
    expect(answer.json()).toMatchObject({ code: "validation_failed", scimType: "invalidValue" });
  });

  it.each([
    ["not JSON", "{"],
    ["a truncated JSON body", '{"schemas":['],
  ])("a body that is %s: SCIM endpoints answer 400 invalidSyntax as a SCIM error", async (_what, body) => {
    const error = scimErrorOf(await scim.call("POST", "/Bulk", body), 400, "invalidSyntax");
    expect(error).toMatchObject({ code: "validation_failed", title: "The request is not valid" });
  });

  it("/Resources keeps problem documents, with SCIM's invalidSyntax for a body that is not JSON", async () => {
    const answer = await scim.call("POST", "/Resources", "{", { "content-type": "application/json" });
    expect(answer.status).toBe(400);
    expect(String(answer.headers["content-type"])).toMatch(/^application\/problem\+json/);
    expect(answer.json()).toMatchObject({ status: 400, code: "validation_failed", scimType: "invalidSyntax" });
  });

  it("a SCIM endpoint's refusals are SCIM errors too: 401 keeps its challenge", async () => {
    const answer = await scim.call("POST", "/Bulk", { schemas: [], Operations: [] }, { authorization: "" });
    expect(scimErrorOf(answer, 401).code).toBe("token_missing");
    expect(answer.headers["www-authenticate"]).toBe('Bearer realm="bizctl"');
  });
});
