import type { Static } from "@sinclair/typebox";
import { type RawBuilder, sql } from "kysely";
import { confirmsAddresses, rolesOfBits } from "../../contract/policy/index.js";
import { type ResourceListQuery, SCHEMA_URN } from "../../contract/resources.js";
import { compileFilter } from "../filter/compile.js";
import { resourceSortKeys, resourcesTargetAt } from "../filter/resources-target.js";
import { userSearch } from "../filter/user-search.js";
import {
  assertPreconditions,
  ChangedMeanwhile,
  etagOf,
  type Preconditions,
  retryWhenChanged,
} from "../http/preconditions.js";
import { ProblemError } from "../problem-error.js";
import { revokeUserApiTokens } from "../store/api-tokens-repo.js";
import { voidPendingLinks } from "../store/reset-tokens-repo.js";
import * as repo from "../store/resources-repo.js";
import { revokeUserSessions } from "../store/sessions-repo.js";
import { markAddresses, saveCredential } from "../store/users-repo.js";
import { type AuditEntry, actorOf, auditBy, recordRefusal, refusalsRecorded } from "./audit.js";
import { keepingAnAdmin, takesAwayAnAdmin, userRolesOf } from "./last-admin.js";
import { changedNames, resourceAction, targetOf } from "./resource-audit.js";
import { type Attributes, checkBody, scimInvalid } from "./resource-bodies.js";
import { indexedColumns, uniqueness } from "./resource-columns.js";
import { parseListQuery, parseReadQuery } from "./resource-list-query.js";
import { assertCan, readableCondition, readsAllOf } from "./resource-policy.js";
import { toRepresentation } from "./resource-representation.js";
import type { Principal, ServiceContext } from "./service-context.js";
import { checkUserFilter, checkUserSortBy } from "./user-attributes.js";
import { planUserReplacement, type Replacement, type UserBody } from "./user-replacement.js";

// The operations on /Resources: list, read, create, replace, delete, each with its audit record.

import { assertNamesFree, keepWhenRetained } from "./deleted-users.js";

export { createResource, createResources } from "./resource-create.js";

type ListQuery = Static<typeof ResourceListQuery>;

export async function listResources(ctx: ServiceContext, principal: Principal, query: ListQuery) {
  const parsed = parseListQuery(query);
  const conditions: RawBuilder<unknown>[] = [readableCondition(principal)];
  if (parsed.types?.length) conditions.push(sql`r.resource_type in (${sql.join(parsed.types)})`);
  const nowIso = ctx.clock().toISOString();
  const usersOnly = parsed.types?.length === 1 && parsed.types[0] === "User";
  if (usersOnly && parsed.filter) checkUserFilter(parsed.filter);
  if (usersOnly && parsed.sortBy !== undefined) checkUserSortBy(parsed.sortBy);
  if (parsed.filter) {
    conditions.push(compileFilter(parsed.filter, resourcesTargetAt(nowIso, ctx.store.dialect, usersOnly)));
  }
  const search = parsed.search === undefined ? undefined : userSearch(parsed.search, ctx.store.dialect);
  if (search) conditions.push(search.where);
  const where = sql`${sql.join(conditions, sql` and `)}`;
  const sortPath = parsed.sortBy
    ?.slice(parsed.sortBy.lastIndexOf(":") + 1)
    .split(".")
    .map((p) => p.toLowerCase());
  // a search shows its best matches first, unless sortby asks for another order
  const order = sortPath
    ? { ...resourceSortKeys(sortPath, nowIso, usersOnly), descending: parsed.descending }
    : search && { ...search.order, descending: parsed.descending };
  const { rows, total } = await repo.listResources(ctx.store.db, {
    nowIso,
    where,
    ...(order && { order }),
    offset: parsed.startIndex - 1,
    limit: parsed.count,
    // without a filter, what the caller may read of these types is all of them, or a count
    ...(!parsed.filter && !search && readsAllOf(principal, parsed.types) && { wholeTypes: parsed.types ?? [] }),
    ...(parsed.activeOnly !== undefined &&
      usersOnly &&
      !search &&
      readsAllOf(principal, parsed.types) && { activeUsers: parsed.activeOnly }),
  });
  return {
    schemas: [SCHEMA_URN.listResponse],
    totalResults: total,
    startIndex: parsed.startIndex,
    itemsPerPage: rows.length,
    Resources: rows.map((row) => toRepresentation(ctx, row, principal)),
  };
}

async function mustFind(ctx: ServiceContext, principal: Principal, id: string) {
  const row = await repo.findResource(ctx.store.db, id, ctx.clock().toISOString());
  if (!row) throw new ProblemError("not_found", `No resource with id ${id}.`);
  assertCan(principal, "read", row.resource_type, { id: row.id });
  return row;
}

export async function getResource(ctx: ServiceContext, principal: Principal, id: string, query: ListQuery) {
  const types = parseReadQuery(query);
  const row = await mustFind(ctx, principal, id);
  if (types?.length && !types.includes(row.resource_type))
    throw new ProblemError("not_found", `No resource with id ${id} of type ${types.join(", ")}.`);
  return { body: toRepresentation(ctx, row, principal), etag: etagOf(row.version) };
}

export function replaceResource(
  ctx: ServiceContext,
  principal: Principal,
  id: string,
  body: Attributes,
  preconditions?: Preconditions,
) {
  return retryWhenChanged(() => replaceResourceOnce(ctx, principal, id, body, preconditions));
}

/** A resource as it is stored, for a change made of it (a PATCH): its type, attributes and version. */
export async function readForChange(ctx: ServiceContext, principal: Principal, id: string) {
  const row = await mustFind(ctx, principal, id);
  return { type: row.resource_type, attributes: JSON.parse(row.attributes) as Attributes, version: row.version };
}

/**
 * Replaces the resource with `body` only while it is at `version`, the one `body` was made of;
 * ChangedMeanwhile otherwise, for the caller to make the body again of the newer version.
 */
export function replaceResourceAt(
  ctx: ServiceContext,
  principal: Principal,
  id: string,
  body: Attributes,
  version: number,
) {
  return replaceResourceOnce(ctx, principal, id, body, undefined, version);
}

/** The replacement of a resource that is not a User: its attributes and one record; a consumer keeps its key. */
function planReplacement(
  principal: Principal,
  current: repo.ResourceWithLogin,
  currentAttributes: Attributes,
  checked: Attributes,
  body: Attributes,
): Replacement {
  const type = current.resource_type;
  assertCan(principal, "update", type, { id: current.id });
  const records = [
    { action: resourceAction(type, "update"), details: { changed: changedNames(currentAttributes, checked) } },
  ];
  let attributes = checked;
  if (type === "OAuthConsumer") {
    if (body.consumerKey !== undefined && body.consumerKey !== currentAttributes.consumerKey) {
      throw scimInvalid("'consumerKey' cannot change.", "/consumerKey", "mutability");
    }
    attributes = { ...attributes, consumerKey: currentAttributes.consumerKey };
  }
  return { attributes, revokeSessions: false, voidLinks: false, records };
}

/** The resource's row as a replacement leaves it: the next version, the account state left out. */
function replacedRow(ctx: ServiceContext, current: repo.ResourceWithLogin, attributes: Attributes): repo.ResourceRow {
  const {
    first_login: _firstLogin,
    has_password: _hasPassword,
    failed_logins: _failedLogins,
    locked_until: _lockedUntil,
    last_login_at: _lastLogin,
    password_changed_at: _passwordChanged,
    open_sessions: _openSessions,
    invited: _invited,
    mfa_enabled: _mfaEnabled,
    issuer_role: _issuerRole,
    ...currentRow
  } = current;
  return {
    ...currentRow,
    ...indexedColumns(current.resource_type, attributes),
    updated_at: ctx.clock().toISOString(),
    version: current.version + 1,
  };
}

async function replaceResourceOnce(
  ctx: ServiceContext,
  principal: Principal,
  id: string,
  body: Attributes,
  preconditions?: Preconditions,
  expectedVersion?: number,
) {
  const current = await mustFind(ctx, principal, id);
  if (expectedVersion !== undefined && current.version !== expectedVersion) {
    throw new ChangedMeanwhile("resource", "updated");
  }
  const type = current.resource_type;
  const checked = checkBody(type, body, current);
  const currentAttributes = JSON.parse(current.attributes) as Attributes;
  const auditTarget = targetOf(type, id, currentAttributes);
  const plan =
    type === "User"
      ? await planUserReplacement(ctx, principal, current, currentAttributes, checked, body as UserBody, auditTarget)
      : planReplacement(principal, current, currentAttributes, checked, body);
  const { attributes, credential, revokeSessions, voidLinks, records, addressesChanged } = plan;
  // a person signed in (or a service account) confirms the User's addresses by any change of it;
  // a person's token or OAuth grant unconfirms them by changing them
  const addressesByDelegate =
    type !== "User" ? undefined : confirmsAddresses(principal) ? false : addressesChanged ? true : undefined;
  if (type === "User") await assertRenameFree(ctx, current, attributes);
  assertPreconditions(preconditions, etagOf(current.version));
  const row = replacedRow(ctx, current, attributes);
  const guarded = type === "User" && takesAwayAnAdmin(currentAttributes, attributes, rolesOfBits(current.group_roles));
  try {
    await ctx.store.db.transaction().execute(async (trx) => {
      const write = async () => {
        if (!(await repo.replaceResource(trx, row, current.version))) {
          throw new ChangedMeanwhile("resource", "updated");
        }
        if (credential) await saveCredential(trx, id, credential, ctx.clock());
        if (addressesByDelegate !== undefined) await markAddresses(trx, id, addressesByDelegate);
        if (voidLinks) await voidPendingLinks(trx, id, ctx.clock());
        if (revokeSessions) {
          // what ends the sessions (a password set, a disabling) ends the API tokens too
          await revokeUserSessions(trx, id, ctx.clock());
          await revokeUserApiTokens(trx, id, ctx.clock());
        }
        for (const record of records) await auditBy(ctx, trx, principal, { ...record, target: auditTarget });
      };
      await (guarded ? keepingAnAdmin(ctx, trx, write) : write());
    });
  } catch (error) {
    // the last admin kept: a refused role change or disabling, recorded as such
    if (error instanceof ProblemError && error.code === "conflict" && guarded) {
      for (const record of records) {
        await recordRefusal(
          ctx,
          { ...record, actor: actorOf(principal), origin: principal.origin, target: auditTarget },
          error.code,
        );
      }
    }
    uniqueness(error, type, attributes);
  }
  // read again: the change may have ended sessions or set a password
  const written = await repo.findResource(ctx.store.db, id, ctx.clock().toISOString());
  return {
    body: toRepresentation(ctx, written ?? { ...row, first_login: null }, principal),
    etag: etagOf(row.version),
  };
}

/** A User renamed to a name (or externalId) a deleted User holds is refused, as a create is. */
async function assertRenameFree(ctx: ServiceContext, current: repo.ResourceWithLogin, attributes: Attributes) {
  const next = indexedColumns("User", attributes);
  await assertNamesFree(ctx, {
    userNameKey: next.user_name_key === current.user_name_key ? null : next.user_name_key,
    externalId: next.external_id === current.external_id ? null : next.external_id,
  });
}

export function deleteResource(ctx: ServiceContext, principal: Principal, id: string, preconditions?: Preconditions) {
  return retryWhenChanged(() => deleteResourceOnce(ctx, principal, id, preconditions));
}

async function deleteResourceOnce(
  ctx: ServiceContext,
  principal: Principal,
  id: string,
  preconditions?: Preconditions,
) {
  const current = await mustFind(ctx, principal, id);
  const attributes = JSON.parse(current.attributes) as Attributes;
  const isUser = current.resource_type === "User";
  const type = current.resource_type;
  const target = targetOf(type, id, attributes);
  const record = { action: resourceAction(type, "delete"), target };
  await refusalsRecorded(
    ctx,
    (error) =>
      error.code === "forbidden" || error.code === "conflict"
        ? { ...record, actor: actorOf(principal), origin: principal.origin }
        : undefined,
    () => deleteRecorded(ctx, principal, { id, current, attributes, isUser, record, preconditions }),
  );
}

async function deleteRecorded(
  ctx: ServiceContext,
  principal: Principal,
  input: {
    id: string;
    current: repo.ResourceWithLogin;
    attributes: Attributes;
    isUser: boolean;
    record: Omit<AuditEntry, "actor" | "origin">;
    preconditions: Preconditions | undefined;
  },
) {
  const { id, current, attributes, isUser, preconditions } = input;
  assertCan(principal, "delete", current.resource_type, {
    id,
    roles: isUser ? userRolesOf(attributes, current.group_roles) : [],
  });
  assertPreconditions(preconditions, etagOf(current.version));
  await ctx.store.db.transaction().execute(async (trx) => {
    await auditBy(ctx, trx, principal, input.record);
    // sessions, credentials and indexed values go with it (foreign keys cascade)
    const remove = async () => {
      // a User is kept for a restore first, when the server retains deletes
      if (isUser) await keepWhenRetained(ctx, trx, id, String(attributes.userName));
      if (!(await repo.deleteResource(trx, id, current.version))) {
        throw new ChangedMeanwhile("resource", "deleted");
      }
    };
    await (isUser && takesAwayAnAdmin(attributes, undefined, rolesOfBits(current.group_roles))
      ? keepingAnAdmin(ctx, trx, remove)
      : remove());
    // refused after the last-admin guard, so that the last admin hears that reason first
    if (isUser && id === principal.userId) throw new ProblemError("conflict", "You cannot delete your own user.");
  });
}
