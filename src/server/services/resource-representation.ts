import { type PasswordState, RESOURCES_PATH, SCHEMA_URN } from "../../contract/resources.js";
import { etagOf } from "../http/preconditions.js";
import type { ResourceWithLogin } from "../store/resources-repo.js";
import type { Attributes } from "./resource-bodies.js";
import { can } from "./resource-policy.js";
import type { Principal, ServiceContext } from "./service-context.js";

// A resource as the API shows it: schemas, attributes, meta, and a User's account state for staff.

function passwordStateOf(row: ResourceWithLogin): PasswordState {
  if (Number(row.has_password ?? 0) !== 1) return "none";
  return row.first_login === 1 ? "temporary" : "set";
}

function accountState(ctx: ServiceContext, row: ResourceWithLogin): Attributes {
  const lockedUntil =
    row.locked_until && Date.parse(row.locked_until) > ctx.clock().getTime() ? row.locked_until : undefined;
  return {
    // a pending first login is account state like the rest: a member does not see it on its own
    // User either (it has GET /auth/isFirstLogin, and its login says so)
    firstLogin: row.first_login === 1,
    passwordState: passwordStateOf(row),
    locked: lockedUntil !== undefined,
    ...(lockedUntil && { lockedUntil }),
    failedLogins: row.failed_logins ?? 0,
    ...(row.last_login_at && { lastLogin: row.last_login_at }),
    ...(row.password_changed_at && { passwordChangedAt: row.password_changed_at }),
    openSessions: Number(row.open_sessions ?? 0),
    invited: Number(row.invited ?? 0) === 1,
    mfaEnabled: Number(row.mfa_enabled ?? 0) === 1,
    serviceAccount: row.service_account === 1,
  };
}

function schemasOf(type: string): string[] {
  if (type === "User") return [SCHEMA_URN.user, SCHEMA_URN.enterpriseUser];
  if (type === "OAuthConsumer") return [SCHEMA_URN.oauthConsumer];
  return [SCHEMA_URN.custom(type)];
}

export function toRepresentation(ctx: ServiceContext, row: ResourceWithLogin, principal: Principal): Attributes {
  const location = `${ctx.publicUrl ?? ""}${RESOURCES_PATH}/${row.id}`;
  const user = row.resource_type === "User";
  return {
    schemas: schemasOf(row.resource_type),
    id: row.id,
    resourceType: row.resource_type,
    ...JSON.parse(row.attributes),
    ...(user && can(principal, "readAccountState", "User") && accountState(ctx, row)),
    meta: {
      resourceType: row.resource_type,
      created: row.created_at,
      lastModified: row.updated_at,
      version: etagOf(row.version),
      location,
    },
  };
}
