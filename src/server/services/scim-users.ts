import type { Static } from "@sinclair/typebox";
import type { ResourceListQuery } from "../../contract/resources.js";
import { SCHEMA_URN, UserInput } from "../../contract/resources.js";
import { ACCOUNT_ATTRIBUTES, ENTERPRISE_ATTRIBUTES, SCIM_URN } from "../../contract/scim.js";
import { USERS_PATH } from "../../contract/scim-users.js";
import type { Preconditions } from "../http/preconditions.js";
import { roleNames } from "../store/users-repo.js";
import type { Attributes } from "./resource-bodies.js";
import { scimInvalid } from "./resource-bodies.js";
import { type PatchRequest, patchResource } from "./resource-patch.js";
import { can } from "./resource-policy.js";
import * as resources from "./resources.js";
import { canonicalNames, withoutUnassigned } from "./scim-attributes.js";
import { groupsOfUsers, roleSourcesOf } from "./scim-group-representation.js";
import { project } from "./scim-projection.js";
import type { Principal, ServiceContext } from "./service-context.js";

// /Users and /Me (RFC 7644 section 3): the Users of /Resources, read and written in SCIM's
// representation. Every operation is the /Resources one, with its rules and its audit.

const ENTERPRISE = new Set<string>(ENTERPRISE_ATTRIBUTES);
const ENTERPRISE_LOWER = new Set(ENTERPRISE_ATTRIBUTES.map((name) => name.toLowerCase()));
const ACCOUNT = new Set<string>(ACCOUNT_ATTRIBUTES);
/** What a client may send and the server ignores (RFC 7644 section 3.3: read-only attributes). */
const READ_ONLY = new Set(["id", "meta", "groups", ...ACCOUNT_ATTRIBUTES].map((name) => name.toLowerCase()));

export interface Projection {
  attributes?: string;
  excludedattributes?: string;
}

const isObject = (value: unknown): value is Attributes =>
  value !== null && typeof value === "object" && !Array.isArray(value);

/** A User as /Resources shows it, as /Users shows it: the extensions under their URNs, its location under /Users. */
export function toScimUser(ctx: ServiceContext, representation: Attributes): Attributes {
  const { schemas: _schemas, resourceType: _type, meta, ...attributes } = representation;
  const core: Attributes = {};
  const enterprise: Attributes = {};
  const account: Attributes = {};
  for (const [name, value] of Object.entries(attributes)) {
    if (ENTERPRISE.has(name)) enterprise[name] = value;
    else if (ACCOUNT.has(name)) account[name] = value;
    else core[name] = value;
  }
  const hasEnterprise = Object.keys(enterprise).length > 0;
  const hasAccount = Object.keys(account).length > 0;
  return {
    schemas: [
      SCHEMA_URN.user,
      ...(hasEnterprise ? [SCHEMA_URN.enterpriseUser] : []),
      ...(hasAccount ? [SCIM_URN.account] : []),
    ],
    ...core,
    ...(hasEnterprise && { [SCHEMA_URN.enterpriseUser]: enterprise }),
    ...(hasAccount && { [SCIM_URN.account]: account }),
    meta: { ...(meta as Attributes), location: `${ctx.publicUrl ?? ""}${USERS_PATH}/${String(core.id)}` },
  };
}

/** Entra ID sends the manager as its id alone: it is the manager's `value`. */
const managerOf = (value: unknown) => (typeof value === "string" ? { value } : value);

/**
 * A User as a SCIM client sends it, as /Resources keeps it: the enterprise extension's members at
 * the top level, null members and empty arrays dropped (unassigned), attribute names as the schema writes them, the
 * read-only members ignored.
 */
export function fromScimUser(body: Attributes): Attributes {
  const flat: Attributes = {};
  let extension: Attributes = {};
  for (const [name, value] of Object.entries(body)) {
    const lower = name.toLowerCase();
    if (lower === SCHEMA_URN.enterpriseUser.toLowerCase()) {
      if (value !== null && !isObject(value)) {
        throw scimInvalid(`'${name}' must be an object of the enterprise attributes.`, `/${name}`);
      }
      extension = value ?? {};
      // only the extension's own attributes: a `password` here is not the core one (RFC 7643 section 3)
      const foreign = Object.keys(extension).find((key) => !ENTERPRISE_LOWER.has(key.toLowerCase()));
      if (foreign !== undefined) {
        throw scimInvalid(
          `'${foreign}' is not an attribute of ${SCHEMA_URN.enterpriseUser} (${ENTERPRISE_ATTRIBUTES.join(", ")}).`,
          `/${name}/${foreign}`,
        );
      }
    } else if (lower !== SCIM_URN.account.toLowerCase() && !READ_ONLY.has(lower)) {
      flat[name] = value;
    }
  }
  const user = canonicalNames(withoutUnassigned({ ...flat, ...extension }), UserInput) as Attributes;
  if (user.resourceType !== undefined && user.resourceType !== "User") {
    throw scimInvalid("/Users holds Users only: resourceType must be User.", "/resourceType");
  }
  return { ...user, ...(user.manager !== undefined && { manager: managerOf(user.manager) }), resourceType: "User" };
}

const asUser = (
  ctx: ServiceContext,
  body: Attributes,
  projection: Projection = {},
  groups?: Attributes[],
  account?: Attributes,
) => {
  const user = toScimUser(ctx, body);
  if (account) {
    user[SCIM_URN.account] = { ...(user[SCIM_URN.account] as Attributes | undefined), ...account };
    if (!(user.schemas as string[]).includes(SCIM_URN.account))
      user.schemas = [...(user.schemas as string[]), SCIM_URN.account];
  }
  return project({ ...user, ...(groups?.length && { groups }) }, projection.attributes, projection.excludedattributes);
};

/** The `groups` of the Users of a page (readOnly, RFC 7643 section 4.1.2), in one read. */
const groupsOfPage = (ctx: ServiceContext, users: Attributes[]) =>
  groupsOfUsers(
    ctx,
    users.map((user) => String(user.id)),
  );

export async function listUsers(
  ctx: ServiceContext,
  principal: Principal,
  query: Omit<Static<typeof ResourceListQuery>, "resourcetypes"> & Projection,
) {
  const { attributes, excludedattributes, ...list } = query;
  const page = await resources.listResources(ctx, principal, { ...list, resourcetypes: "User" });
  const groups = await groupsOfPage(ctx, page.Resources);
  return {
    ...page,
    Resources: page.Resources.map((user) =>
      asUser(ctx, user, { attributes, excludedattributes }, groups.get(String(user.id))),
    ),
  };
}

/** The User `id` (404 for any other resource, as for none), and its ETag. */
export async function getUser(ctx: ServiceContext, principal: Principal, id: string, projection: Projection = {}) {
  const found = await resources.getResource(ctx, principal, id, { resourcetypes: "User" });
  const groups = await groupsOfPage(ctx, [found.body]);
  // the account state says where each effective role comes from (spec 1.9)
  const account = can(principal, "readAccountState", "User")
    ? { roleSources: await roleSourcesOf(ctx, id, roleNames(found.body)) }
    : undefined;
  return { body: asUser(ctx, found.body, projection, groups.get(id), account), etag: found.etag };
}

export async function createUser(ctx: ServiceContext, principal: Principal, body: Attributes) {
  const created = await resources.createResource(ctx, principal, fromScimUser(body));
  const user = created.body as Attributes;
  return { body: asUser(ctx, user), etag: created.etag, location: `${USERS_PATH}/${String(user.id)}` };
}

export async function replaceUser(
  ctx: ServiceContext,
  principal: Principal,
  id: string,
  body: Attributes,
  preconditions?: Preconditions,
) {
  await getUser(ctx, principal, id);
  const replaced = await resources.replaceResource(ctx, principal, id, fromScimUser(body), preconditions);
  return { body: asUser(ctx, replaced.body), etag: replaced.etag };
}

export async function patchUser(
  ctx: ServiceContext,
  principal: Principal,
  id: string,
  request: PatchRequest,
  preconditions?: Preconditions,
) {
  const patched = await patchResource(ctx, principal, id, request, preconditions, "User");
  return { body: asUser(ctx, patched.body), etag: patched.etag };
}

export async function deleteUser(ctx: ServiceContext, principal: Principal, id: string, preconditions?: Preconditions) {
  await getUser(ctx, principal, id);
  await resources.deleteResource(ctx, principal, id, preconditions);
}
