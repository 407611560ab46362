import type { Static } from "@sinclair/typebox";
import { type RawBuilder, sql } from "kysely";
import { RESOURCES_PATH, type ResourceListQuery, SCHEMA_URN } from "../../contract/resources.js";
import { compileFilter } from "../filter/compile.js";
import { resourceSortKeys, resourcesTargetAt } from "../filter/resources-target.js";
import {
  assertPreconditions,
  ChangedMeanwhile,
  etagOf,
  type Preconditions,
  retryWhenChanged,
} from "../http/preconditions.js";
import { ProblemError } from "../problem-error.js";
import { revokeUserApiTokens } from "../store/api-tokens-repo.js";
import { isUniqueViolation, isUniqueViolationOn } from "../store/errors.js";
import { voidPendingLinks } from "../store/reset-tokens-repo.js";
import * as repo from "../store/resources-repo.js";
import { revokeUserSessions } from "../store/sessions-repo.js";
import { credentialRow, roleNames, saveCredential } from "../store/users-repo.js";
import { type AuditEntry, actorOf, auditBy, auditRow, recordRefusal, refusalsRecorded } from "./audit.js";
import { issuerRoleOf } from "./issued-credentials.js";
import { keepingAnAdmin, takesAwayAnAdmin } from "./last-admin.js";
import { assertAcceptablePassword, hashPassword } from "./passwords.js";
import { randomToken } from "./random-token.js";
import { changedNames, resourceAction, targetOf } from "./resource-audit.js";
import {
  type Attributes,
  assertImportedHash,
  checkBody,
  defaultUserAttributes,
  scimInvalid,
  typeOf,
} from "./resource-bodies.js";
import { parseListQuery, parseReadQuery } from "./resource-list-query.js";
import { assertCan, readableCondition, readsAllOf } from "./resource-policy.js";
import { toRepresentation } from "./resource-representation.js";
import type { Principal, ServiceContext } from "./service-context.js";
import { planUserReplacement, type Replacement, type UserBody } from "./user-replacement.js";

// The operations on /Resources: list, read, create, replace, delete, each with its audit record.

type ListQuery = Static<typeof ResourceListQuery>;

export async function listResources(ctx: ServiceContext, principal: Principal, query: ListQuery) {
  const parsed = parseListQuery(query);
  const conditions: RawBuilder<unknown>[] = [readableCondition(principal)];
  if (parsed.types?.length) conditions.push(sql`r.resource_type in (${sql.join(parsed.types)})`);
  const nowIso = ctx.clock().toISOString();
  const usersOnly = parsed.types?.length === 1 && parsed.types[0] === "User";
  if (parsed.filter) {
    conditions.push(compileFilter(parsed.filter, resourcesTargetAt(nowIso, ctx.store.dialect, usersOnly)));
  }
  const where = sql`${sql.join(conditions, sql` and `)}`;
  const sortPath = parsed.sortBy
    ?.slice(parsed.sortBy.lastIndexOf(":") + 1)
    .split(".")
    .map((p) => p.toLowerCase());
  const order = sortPath && { ...resourceSortKeys(sortPath, nowIso, usersOnly), descending: parsed.descending };
  const { rows, total } = await repo.listResources(ctx.store.db, {
    nowIso,
    where,
    ...(order && { order }),
    offset: parsed.startIndex - 1,
    limit: parsed.count,
    // without a filter, what the caller may read of these types is all of them, or a count
    ...(!parsed.filter && readsAllOf(principal, parsed.types) && { wholeTypes: parsed.types ?? [] }),
    ...(parsed.activeOnly !== undefined &&
      usersOnly &&
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

function uniqueness(error: unknown, type: string, body: Attributes): never {
  if (isUniqueViolationOn(error, "external_id")) {
    throw new ProblemError("conflict", `Another ${type} has the externalId ${String(body.externalId)}.`, {
      errors: [{ path: "/externalId", message: "is taken by another resource of this type" }],
      scimType: "uniqueness",
    });
  }
  if (isUniqueViolation(error)) {
    throw new ProblemError("conflict", `A user named ${String(body.userName)} already exists.`, {
      scimType: "uniqueness",
    });
  }
  throw error;
}

/** The columns a resource's attributes fill besides `attributes`: what lists filter and sort on. */
function indexedColumns(type: string, attributes: Attributes) {
  return {
    // unique per type; an empty one is none
    external_id:
      typeof attributes.externalId === "string" && attributes.externalId !== "" ? attributes.externalId : null,
    display_name: typeof attributes.displayName === "string" ? attributes.displayName : null,
    user_name_key: type === "User" ? String(attributes.userName).toLowerCase() : null,
    attributes: JSON.stringify(attributes),
  };
}

/** A create checked and made ready to write, alone (createResource) or with others (createResources). */
interface PreparedCreate {
  type: string;
  attributes: Attributes;
  row: repo.ResourceRow;
  /** a User's first credential: a password given, one imported, or none yet */
  credential?: { passwordHash: string | null; firstLogin: boolean; issuerRole?: string };
  consumerSecret?: string;
  record: Omit<AuditEntry, "actor" | "origin">;
}

async function prepareCreate(ctx: ServiceContext, principal: Principal, body: Attributes): Promise<PreparedCreate> {
  const type = typeOf(body);
  await refusalsRecorded(
    ctx,
    (error) =>
      error.code === "forbidden"
        ? {
            action: resourceAction(type, "create"),
            actor: actorOf(principal),
            origin: principal.origin,
            target: { type },
          }
        : undefined,
    async () => assertCan(principal, "create", type),
  );
  let attributes = checkBody(type, body);
  const now = ctx.clock().toISOString();
  const id = crypto.randomUUID();
  let consumerSecret: string | undefined;
  if (type === "User") {
    attributes = defaultUserAttributes(attributes);
    if (body.password !== undefined) {
      await assertAcceptablePassword(String(body.password), { userName: String(body.userName) }, ctx.passwordPolicy);
    }
    assertImportedHash(body);
  } else if (type === "OAuthConsumer") {
    if (body.consumerKey !== undefined)
      throw scimInvalid("'consumerKey' is generated by the server.", "/consumerKey", "mutability");
    attributes = { ...attributes, consumerKey: randomToken(18) };
    consumerSecret = randomToken(32);
  }
  const row: repo.ResourceRow = {
    id,
    resource_type: type,
    ...indexedColumns(type, attributes),
    created_at: now,
    updated_at: now,
    version: 1,
  };
  const imported = type === "User" && typeof body.passwordHash === "string" ? body.passwordHash : undefined;
  // an admin-given password is temporary; without one the user waits for a reset link; an
  // imported hash is a password the user chose elsewhere: it stays theirs
  const credential =
    type === "User"
      ? {
          passwordHash: body.password !== undefined ? await hashPassword(String(body.password)) : (imported ?? null),
          firstLogin: imported === undefined,
          ...(body.password !== undefined && { issuerRole: issuerRoleOf(principal) }),
        }
      : undefined;
  return {
    type,
    attributes,
    row,
    ...(credential && { credential }),
    ...(consumerSecret && { consumerSecret }),
    record: {
      action: resourceAction(type, "create"),
      target: targetOf(type, id, attributes),
      details:
        type === "User"
          ? { roles: roleNames(attributes), temporaryPassword: body.password !== undefined }
          : { attributes: Object.keys(attributes).sort() },
    },
  };
}

/** Writes one prepared create in a transaction of its own (a savepoint, in a shared commit). */
async function writeCreate(ctx: ServiceContext, principal: Principal, create: PreparedCreate): Promise<void> {
  const { row, credential, consumerSecret } = create;
  try {
    await ctx.store.db.transaction().execute(async (trx) => {
      await repo.insertResource(trx, row);
      if (credential) await saveCredential(trx, row.id, { ...credential, created: true }, ctx.clock());
      if (consumerSecret) await repo.saveSecret(trx, row.id, consumerSecret);
      await auditBy(ctx, trx, principal, create.record);
    });
  } catch (error) {
    uniqueness(error, create.type, create.attributes);
  }
}

export async function createResource(ctx: ServiceContext, principal: Principal, body: Attributes) {
  const create = await prepareCreate(ctx, principal, body);
  await writeCreate(ctx, principal, create);
  const { row, credential, consumerSecret } = create;
  const representation = {
    ...toRepresentation(
      ctx,
      {
        ...row,
        first_login: credential?.firstLogin === false ? 0 : 1,
        has_password: credential?.passwordHash ? 1 : 0,
      },
      principal,
    ),
    ...(consumerSecret && { consumerSecret }),
  };
  return { body: representation, etag: etagOf(row.version), location: `${RESOURCES_PATH}/${row.id}` };
}

/**
 * Many creates, each with the outcome (its id, or its problem) it would have alone, written with
 * as few statements as their number allows: a multi-row insert a table for those whose keys are
 * free, in one savepoint. A create whose userName or externalId is taken, by a stored resource or
 * by one before it here, and any create whose write with the others fails, is written alone
 * afterwards, and fails as createResource fails. An OAuth consumer (its secret) goes alone too.
 */
export async function createResources(
  ctx: ServiceContext,
  principal: Principal,
  bodies: Attributes[],
): Promise<({ id: string; etag: string } | ProblemError)[]> {
  const outcomes: ({ id: string; etag: string } | ProblemError)[] = [];
  const creates: (PreparedCreate | undefined)[] = [];
  for (const [i, body] of bodies.entries()) {
    try {
      creates[i] = await prepareCreate(ctx, principal, body);
    } catch (error) {
      if (!(error instanceof ProblemError)) throw error;
      outcomes[i] = error;
    }
  }
  const ready = [...creates.keys()].filter((i) => creates[i] !== undefined);
  const externalIdOf = (create: PreparedCreate) =>
    create.row.external_id === null ? undefined : repo.externalIdKey(create.type, create.row.external_id);
  const taken = await repo.takenKeys(ctx.store.db, {
    userNameKeys: ready.flatMap((i) => creates[i]?.row.user_name_key ?? []),
    externalIds: ready.flatMap((i) => {
      const create = creates[i] as PreparedCreate;
      return create.row.external_id === null ? [] : [{ type: create.type, externalId: create.row.external_id }];
    }),
  });
  const together: number[] = [];
  let alone: number[] = [];
  for (const i of ready) {
    const create = creates[i] as PreparedCreate;
    const name = create.row.user_name_key;
    const externalId = externalIdOf(create);
    const clashes =
      (name !== null && taken.userNameKeys.has(name)) ||
      (externalId !== undefined && taken.externalIds.has(externalId));
    if (name !== null) taken.userNameKeys.add(name);
    if (externalId !== undefined) taken.externalIds.add(externalId);
    (clashes || create.consumerSecret ? alone : together).push(i);
  }
  if (together.length > 0) {
    try {
      await ctx.store.db.transaction().execute((trx) =>
        repo.insertResources(
          trx,
          together.map((i) => {
            const { row, credential, record } = creates[i] as PreparedCreate;
            return {
              row,
              ...(credential && { credential: credentialRow(row.id, credential, ctx.clock()) }),
              audit: auditRow(ctx, { ...record, actor: actorOf(principal), origin: principal.origin }),
            };
          }),
        ),
      );
    } catch {
      // a key taken meanwhile, or a value the store refuses: each alone tells whose it was
      alone = [...alone, ...together].sort((a, b) => a - b);
      together.length = 0;
    }
  }
  for (const i of together) {
    const { row } = creates[i] as PreparedCreate;
    outcomes[i] = { id: row.id, etag: etagOf(row.version) };
  }
  for (const i of alone) {
    const create = creates[i] as PreparedCreate;
    try {
      await writeCreate(ctx, principal, create);
      outcomes[i] = { id: create.row.id, etag: etagOf(create.row.version) };
    } catch (error) {
      if (!(error instanceof ProblemError)) throw error;
      outcomes[i] = error;
    }
  }
  return outcomes;
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
  const { attributes, credential, revokeSessions, voidLinks, records } = plan;
  assertPreconditions(preconditions, etagOf(current.version));
  const row = replacedRow(ctx, current, attributes);
  const guarded = type === "User" && takesAwayAnAdmin(currentAttributes, attributes);
  try {
    await ctx.store.db.transaction().execute(async (trx) => {
      const write = async () => {
        if (!(await repo.replaceResource(trx, row, current.version))) {
          throw new ChangedMeanwhile("resource", "updated");
        }
        if (credential) await saveCredential(trx, id, credential, ctx.clock());
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
  assertCan(principal, "delete", current.resource_type, { id, roles: isUser ? roleNames(attributes) : [] });
  assertPreconditions(preconditions, etagOf(current.version));
  await ctx.store.db.transaction().execute(async (trx) => {
    await auditBy(ctx, trx, principal, input.record);
    // sessions, credentials and indexed values go with it (foreign keys cascade)
    const remove = async () => {
      if (!(await repo.deleteResource(trx, id, current.version))) {
        throw new ChangedMeanwhile("resource", "deleted");
      }
    };
    await (isUser && takesAwayAnAdmin(attributes, undefined) ? keepingAnAdmin(ctx, trx, remove) : remove());
    // refused after the last-admin guard, so that the last admin hears that reason first
    if (isUser && id === principal.userId) throw new ProblemError("conflict", "You cannot delete your own user.");
  });
}
