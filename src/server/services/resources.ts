import type { Static, TSchema } from "@sinclair/typebox";
import { TypeCompiler } from "@sinclair/typebox/compiler";
import { type RawBuilder, sql } from "kysely";
import {
  CUSTOM_ATTRIBUTES_MAX_BYTES,
  CUSTOM_TYPE_PATTERN,
  LIST_COUNT,
  OAuthConsumerInput,
  RESOURCES_PATH,
  SCHEMA_URN,
  USER_ACCOUNT_STATE,
  UserInput,
} from "../../contract/resources.js";
import type { Role } from "../../contract/route.js";
import { compileFilter } from "../filter/compile.js";
import { parseFilter } from "../filter/parse.js";
import { resourceSortKeys, resourcesTargetAt } from "../filter/resources-target.js";
import { assertIfMatch, ChangedMeanwhile, etagOf, retryWhenChanged } from "../http/preconditions.js";
import { assertPublicKey } from "../oauth1/rsa.js";
import { invalid, ProblemError } from "../problem-error.js";
import { isUniqueViolation } from "../store/errors.js";
import { voidPendingLinks } from "../store/reset-tokens-repo.js";
import * as repo from "../store/resources-repo.js";
import { revokeUserSessions } from "../store/sessions-repo.js";
import { roleNames, saveCredential } from "../store/users-repo.js";
import { assertEmails, assertUserName } from "./accounts.js";
import { type AuditAction, type AuditEntry, actorOf, auditBy, recordRefusal, refusalsRecorded } from "./audit.js";
import { type IssuerRole, issuerRoleOf, issuerStillMay } from "./issued-credentials.js";
import { keepingAnAdmin, takesAwayAnAdmin } from "./last-admin.js";
import { assertAcceptablePassword, hashPassword, isImportableHash } from "./passwords.js";
import { randomToken } from "./random-token.js";
import { assertCan, can, type ResourceAction, readableCondition } from "./resource-policy.js";
import type { Principal, ServiceContext } from "./service-context.js";

type Attributes = Record<string, unknown>;
type UserBody = Static<typeof UserInput>;

export interface ListQuery {
  resourcetypes?: string;
  filter?: string;
  sortby?: string;
  sortorder?: string;
  startindex?: string;
  count?: string;
}

const userChecker = TypeCompiler.Compile(UserInput);
const consumerChecker = TypeCompiler.Compile(OAuthConsumerInput);
const TYPE_NAME = new RegExp(CUSTOM_TYPE_PATTERN);

const scimInvalid = (detail: string, path = "/", scimType = "invalidValue") => invalid(detail, path, scimType);

/** TypeBox says "Expected union value" for a choice of literals (a role): name the choices instead. */
function unionMessage(schema: TSchema): string | undefined {
  const branches = schema.anyOf as TSchema[] | undefined;
  if (!branches?.every((branch) => "const" in branch)) return undefined;
  return `must be one of ${branches.map((branch) => JSON.stringify(branch.const)).join(", ")}`;
}

function validate(checker: ReturnType<typeof TypeCompiler.Compile<TSchema>>, body: unknown, type: string): void {
  if (checker.Check(body)) return;
  const errors = [...checker.Errors(body)].slice(0, 10).map((e) => ({
    path: e.path || "/",
    message: unionMessage(e.schema) ?? e.message,
  }));
  const detail = `The ${type} is not valid: ${errors.map((e) => `${e.path}: ${e.message}`).join("; ")}`;
  throw new ProblemError("validation_failed", detail, { errors, scimType: "invalidValue" });
}

function typeOf(body: Attributes): string {
  const declared = body.resourceType;
  if (typeof declared === "string") {
    if (!TYPE_NAME.test(declared))
      throw scimInvalid(`'${declared}' is not a resource type name (${CUSTOM_TYPE_PATTERN}).`, "/resourceType");
    return declared;
  }
  const schemas = Array.isArray(body.schemas) ? body.schemas : [];
  if (schemas.includes(SCHEMA_URN.user)) return "User";
  throw scimInvalid("resourceType is required (User, OAuthConsumer, or a custom type name).", "/resourceType");
}

/** A User's account state: read-only, shown to admin and support, filterable (`locked eq true`). */
const ACCOUNT_STATE: readonly string[] = USER_ACCOUNT_STATE;

/** What a client sends beside the attributes: the type, schemas, and the read-only members. */
const ENVELOPE = [
  "resourceType",
  "schemas",
  "id",
  "meta",
  "password",
  "passwordHash",
  "firstLogin",
  "consumerSecret",
  ...ACCOUNT_STATE,
];

const withoutAccountState = (body: Attributes): Attributes =>
  Object.fromEntries(Object.entries(body).filter(([key]) => !ACCOUNT_STATE.includes(key)));

function accountState(ctx: ServiceContext, row: repo.ResourceWithLogin): Attributes {
  const lockedUntil =
    row.locked_until && Date.parse(row.locked_until) > ctx.clock().getTime() ? row.locked_until : undefined;
  return {
    locked: lockedUntil !== undefined,
    ...(lockedUntil && { lockedUntil }),
    failedLogins: row.failed_logins ?? 0,
    ...(row.last_login_at && { lastLogin: row.last_login_at }),
    ...(row.password_changed_at && { passwordChangedAt: row.password_changed_at }),
    openSessions: Number(row.open_sessions ?? 0),
    invited: Number(row.invited ?? 0) === 1,
  };
}

function attributesOf(body: Attributes): Attributes {
  return Object.fromEntries(Object.entries(body).filter(([key]) => !ENVELOPE.includes(key)));
}

function schemasOf(type: string): string[] {
  if (type === "User") return [SCHEMA_URN.user, SCHEMA_URN.enterpriseUser];
  if (type === "OAuthConsumer") return [SCHEMA_URN.oauthConsumer];
  return [SCHEMA_URN.custom(type)];
}

function toRepresentation(ctx: ServiceContext, row: repo.ResourceWithLogin, principal: Principal): Attributes {
  const location = `${ctx.publicUrl ?? ""}${RESOURCES_PATH}/${row.id}`;
  const user = row.resource_type === "User";
  return {
    schemas: schemasOf(row.resource_type),
    id: row.id,
    resourceType: row.resource_type,
    ...JSON.parse(row.attributes),
    ...(user && { firstLogin: row.first_login === 1 }),
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

function checkBody(type: string, body: Attributes, current?: repo.ResourceRow): Attributes {
  if (type === "User") {
    if (typeof body.userName === "string") assertUserName(body.userName);
    assertEmails(body.emails);
    // the account state a GET showed is ignored on PUT, as meta is, and refused on create (below)
    validate(userChecker, withoutAccountState(body), "User");
  } else if (type === "OAuthConsumer") {
    validate(consumerChecker, body, "OAuthConsumer");
    assertPublicKey(body.publicKey);
  } else {
    const size = Buffer.byteLength(JSON.stringify(attributesOf(body)));
    if (size > CUSTOM_ATTRIBUTES_MAX_BYTES) {
      throw scimInvalid(
        `A resource may hold at most ${CUSTOM_ATTRIBUTES_MAX_BYTES} bytes of attributes (this has ${size}).`,
      );
    }
  }
  if (!current) {
    for (const readOnly of ["id", "meta", "firstLogin", ...ACCOUNT_STATE]) {
      if (body[readOnly] !== undefined)
        throw scimInvalid(`'${readOnly}' is assigned by the server.`, `/${readOnly}`, "mutability");
    }
  } else {
    if (body.id !== undefined && body.id !== current.id) throw scimInvalid("'id' cannot change.", "/id", "mutability");
    if (body.resourceType !== undefined && body.resourceType !== current.resource_type) {
      throw scimInvalid("'resourceType' cannot change.", "/resourceType", "mutability");
    }
  }
  return attributesOf(body);
}

function parseInteger(value: string | undefined, name: string): number | undefined {
  if (value === undefined) return undefined;
  if (!/^-?[0-9]{1,9}$/.test(value)) throw scimInvalid(`${name} must be an integer.`, `/query/${name}`);
  return Number(value);
}

/** SCIM paging: startIndex below 1 means 1; count below 0 means 0 and above the maximum means the maximum. */
export function parseListQuery(query: ListQuery) {
  const startIndex = Math.max(parseInteger(query.startindex, "startindex") ?? 1, 1);
  const count = Math.min(Math.max(parseInteger(query.count, "count") ?? LIST_COUNT.default, 0), LIST_COUNT.max);
  const order = (query.sortorder ?? "ascending").toLowerCase();
  if (order !== "ascending" && order !== "descending") {
    throw scimInvalid("sortorder must be 'ascending' or 'descending'.", "/query/sortorder");
  }
  const types = query.resourcetypes
    ?.split(",")
    .map((t) => t.trim())
    .filter(Boolean);
  for (const type of types ?? []) {
    if (!TYPE_NAME.test(type)) throw scimInvalid(`'${type}' is not a resource type name.`, "/query/resourcetypes");
  }
  if (query.sortby !== undefined && !/^[A-Za-z0-9_.:$-]{1,256}$/.test(query.sortby)) {
    throw scimInvalid("sortby must be an attribute path.", "/query/sortby");
  }
  const filter = query.filter !== undefined ? parseFilter(query.filter) : undefined;
  return { startIndex, count, descending: order === "descending", types, filter, sortBy: query.sortby };
}

export async function listResources(ctx: ServiceContext, principal: Principal, query: ListQuery) {
  const parsed = parseListQuery(query);
  const conditions: RawBuilder<unknown>[] = [readableCondition(principal)];
  if (parsed.types?.length) conditions.push(sql`r.resource_type in (${sql.join(parsed.types)})`);
  const nowIso = ctx.clock().toISOString();
  if (parsed.filter) conditions.push(compileFilter(parsed.filter, resourcesTargetAt(nowIso)));
  const where = sql`${sql.join(conditions, sql` and `)}`;
  const sortPath = parsed.sortBy
    ?.slice(parsed.sortBy.lastIndexOf(":") + 1)
    .split(".")
    .map((p) => p.toLowerCase());
  const orderBy = sortPath
    ? resourceSortKeys(sortPath, nowIso).map((expression) => ({ expression, descending: parsed.descending }))
    : [];
  const { rows, total } = await repo.listResources(ctx.store.db, {
    nowIso,
    where,
    orderBy,
    offset: parsed.startIndex - 1,
    limit: parsed.count,
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
  const { types } = parseListQuery(query);
  const row = await mustFind(ctx, principal, id);
  if (types?.length && !types.includes(row.resource_type))
    throw new ProblemError("not_found", `No resource with id ${id} of type ${types.join(", ")}.`);
  return { body: toRepresentation(ctx, row, principal), etag: etagOf(row.version) };
}

function defaultUserAttributes(attributes: Attributes): Attributes {
  return { active: true, roles: [{ value: "member", primary: true }], ...attributes };
}

function uniqueness(error: unknown, body: Attributes): never {
  if (isUniqueViolation(error)) {
    throw new ProblemError("conflict", `A user named ${String(body.userName)} already exists.`, {
      scimType: "uniqueness",
    });
  }
  throw error;
}

/** A hash imported from another system: one we can verify, never a password in clear, never beside one. */
function assertImportedHash(body: Attributes): void {
  if (body.passwordHash === undefined) return;
  if (body.password !== undefined) {
    throw scimInvalid("Give either password or passwordHash, not both.", "/passwordHash");
  }
  if (!isImportableHash(String(body.passwordHash))) {
    throw scimInvalid(
      "passwordHash must be a bcrypt hash ($2a$, $2b$ or $2y$, modular crypt format) or an argon2id hash (PHC string); a password in clear is never accepted.",
      "/passwordHash",
    );
  }
}

/** The audit action of a change to a resource of `type` (Users have their own, finer ones). */
function resourceAction(type: string, change: "create" | "update" | "delete"): AuditAction {
  if (type === "User") return `user.${change}`;
  if (type === "OAuthConsumer") return `oauth.consumer.${change}`;
  return `resource.${change}`;
}

/** The name a person knows a resource by: a User's userName, a consumer's name, a displayName. */
function nameOf(type: string, attributes: Attributes): string | undefined {
  const name = type === "User" ? attributes.userName : (attributes.name ?? attributes.displayName);
  return typeof name === "string" ? name : undefined;
}

function targetOf(type: string, id: string, attributes: Attributes) {
  const name = nameOf(type, attributes);
  return { type, id, ...(name !== undefined && { name }) };
}

/** Names of the top-level attributes that differ: values are not kept (they may be personal data). */
function changedNames(before: Attributes, after: Attributes): string[] {
  const keys = new Set([...Object.keys(before), ...Object.keys(after)]);
  // own members only: an attribute named `toString` is compared, not the function every object has
  const own = (attributes: Attributes, key: string) => (Object.hasOwn(attributes, key) ? attributes[key] : undefined);
  return [...keys].filter((key) => !sameJson(own(before, key), own(after, key))).sort();
}

/** The records of a User replacement: one per kind of change (roles, enabled, password, the rest). */
function userChangeRecords(current: Attributes, next: Attributes, actions: ResourceAction[]) {
  const records: Omit<AuditEntry, "actor" | "origin" | "target">[] = [];
  for (const action of actions) {
    if (action === "changeRoles") {
      records.push({ action: "user.roles", details: { from: roleNames(current), to: roleNames(next) } });
    } else if (action === "setActive") {
      records.push({ action: next.active === false ? "user.disable" : "user.enable" });
    } else if (action === "setPassword") {
      records.push({ action: "password.set", details: { temporary: true } });
    } else if (action === "update") {
      const { roles: _r, active: _a, ...before } = current;
      const { roles: _nr, active: _na, ...after } = next;
      records.push({ action: "user.update", details: { changed: changedNames(before, after) } });
    }
  }
  return records;
}

export async function createResource(ctx: ServiceContext, principal: Principal, body: Attributes) {
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
    external_id: typeof attributes.externalId === "string" ? attributes.externalId : null,
    display_name: typeof attributes.displayName === "string" ? attributes.displayName : null,
    user_name_key: type === "User" ? String(attributes.userName).toLowerCase() : null,
    attributes: JSON.stringify(attributes),
    created_at: now,
    updated_at: now,
    version: 1,
  };
  const imported = type === "User" && typeof body.passwordHash === "string" ? body.passwordHash : undefined;
  const passwordHash =
    type === "User" && body.password !== undefined ? await hashPassword(String(body.password)) : (imported ?? null);
  try {
    await ctx.store.db.transaction().execute(async (trx) => {
      await repo.insertResource(trx, row);
      // an admin-given password is temporary; without one the user waits for a reset link; an
      // imported hash is a password the user chose elsewhere: it stays theirs
      if (type === "User") {
        await saveCredential(
          trx,
          id,
          {
            passwordHash,
            firstLogin: imported === undefined,
            ...(body.password !== undefined && { issuerRole: issuerRoleOf(principal) }),
          },
          ctx.clock(),
        );
      }
      if (consumerSecret) await repo.saveSecret(trx, id, consumerSecret);
      await auditBy(ctx, trx, principal, {
        action: resourceAction(type, "create"),
        target: targetOf(type, id, attributes),
        details:
          type === "User"
            ? { roles: roleNames(attributes), temporaryPassword: body.password !== undefined }
            : { attributes: Object.keys(attributes).sort() },
      });
    });
  } catch (error) {
    uniqueness(error, attributes);
  }
  const representation = {
    ...toRepresentation(ctx, { ...row, first_login: imported === undefined ? 1 : 0 }, principal),
    ...(consumerSecret && { consumerSecret }),
  };
  return { body: representation, etag: etagOf(row.version), location: `${RESOURCES_PATH}/${id}` };
}

/** Whether the User's pending temporary password was set under a role that may not set one for `next`. */
function voidsTemporaryPassword(current: repo.ResourceWithLogin, next: { id: string; roles: Role[] }): boolean {
  return current.first_login === 1 && !issuerStillMay(current.issuer_role ?? null, "temporaryPassword", next);
}

const sameJson = (a: unknown, b: unknown) => JSON.stringify(a ?? null) === JSON.stringify(b ?? null);

/** Which permissions a User replacement needs, from what it changes. */
function userActions(current: Attributes, next: Attributes, body: UserBody): ResourceAction[] {
  const actions: ResourceAction[] = [];
  const { roles: currentRoles, active: currentActive, ...currentRest } = current;
  const { roles: nextRoles, active: nextActive, ...nextRest } = next;
  if (!sameJson(currentRoles, nextRoles)) actions.push("changeRoles");
  if ((currentActive ?? true) !== (nextActive ?? true)) actions.push("setActive");
  if (body.password !== undefined) actions.push("setPassword");
  if (!sameJson(sortKeys(currentRest), sortKeys(nextRest))) actions.push("update");
  return actions;
}

function sortKeys(value: Attributes): Attributes {
  return Object.fromEntries(Object.entries(value).sort(([a], [b]) => a.localeCompare(b)));
}

export function replaceResource(
  ctx: ServiceContext,
  principal: Principal,
  id: string,
  body: Attributes,
  ifMatch?: string,
) {
  return retryWhenChanged(() => replaceResourceOnce(ctx, principal, id, body, ifMatch));
}

async function replaceResourceOnce(
  ctx: ServiceContext,
  principal: Principal,
  id: string,
  body: Attributes,
  ifMatch?: string,
) {
  const current = await mustFind(ctx, principal, id);
  const type = current.resource_type;
  let attributes = checkBody(type, body, current);
  const currentAttributes = JSON.parse(current.attributes) as Attributes;
  let credential: { passwordHash: string | null; firstLogin: true; issuerRole?: IssuerRole } | undefined;
  let revokeSessions = false;
  let voidLinks = false;
  const auditTarget = targetOf(type, id, currentAttributes);
  let records: Omit<AuditEntry, "actor" | "origin" | "target">[] = [];
  if (type === "User") {
    attributes = defaultUserAttributes(attributes);
    const userBody = body as UserBody;
    if (userBody.passwordHash !== undefined) {
      throw scimInvalid(
        "passwordHash is accepted only when a user is created (an import); set a password with 'password' or a reset link.",
        "/passwordHash",
        "mutability",
      );
    }
    const currentFirstLogin = current.first_login === 1;
    if (userBody.firstLogin !== undefined && userBody.firstLogin !== currentFirstLogin) {
      throw scimInvalid("'firstLogin' is read-only.", "/firstLogin", "mutability");
    }
    const target = { id, roles: roleNames(currentAttributes) };
    const actions = userActions(currentAttributes, attributes, userBody);
    records = userChangeRecords(currentAttributes, attributes, actions);
    await refusalsRecorded(
      ctx,
      (error) => {
        if (error.code !== "forbidden") return undefined;
        const refused = records[actions.findIndex((action) => !can(principal, action, type, target))];
        return refused && { ...refused, actor: actorOf(principal), origin: principal.origin, target: auditTarget };
      },
      async () => {
        for (const action of actions) assertCan(principal, action, type, target);
      },
    );
    if (userBody.password !== undefined) {
      await assertAcceptablePassword(userBody.password, { userName: String(attributes.userName) }, ctx.passwordPolicy);
      credential = {
        passwordHash: await hashPassword(userBody.password),
        firstLogin: true,
        issuerRole: issuerRoleOf(principal),
      };
      revokeSessions = true;
    } else if (voidsTemporaryPassword(current, { id, roles: roleNames(attributes) })) {
      // promoted beyond what the temporary password's issuer may set: it goes, with what it opened
      credential = { passwordHash: null, firstLogin: true };
      revokeSessions = true;
      records.push({ action: "password.void", details: { issuerRole: current.issuer_role } });
    }
    if (attributes.active === false) revokeSessions = true;
    // a pending reset or invitation link never outlives a disable or a change of roles
    voidLinks = actions.includes("changeRoles") || actions.includes("setActive");
  } else {
    assertCan(principal, "update", type, { id });
    records = [
      { action: resourceAction(type, "update"), details: { changed: changedNames(currentAttributes, attributes) } },
    ];
    if (type === "OAuthConsumer") {
      if (body.consumerKey !== undefined && body.consumerKey !== currentAttributes.consumerKey) {
        throw scimInvalid("'consumerKey' cannot change.", "/consumerKey", "mutability");
      }
      attributes = { ...attributes, consumerKey: currentAttributes.consumerKey };
    }
  }
  assertIfMatch(ifMatch, etagOf(current.version));
  const {
    first_login: _firstLogin,
    failed_logins: _failedLogins,
    locked_until: _lockedUntil,
    last_login_at: _lastLogin,
    password_changed_at: _passwordChanged,
    open_sessions: _openSessions,
    invited: _invited,
    issuer_role: _issuerRole,
    ...currentRow
  } = current;
  const row: repo.ResourceRow = {
    ...currentRow,
    external_id: typeof attributes.externalId === "string" ? attributes.externalId : null,
    display_name: typeof attributes.displayName === "string" ? attributes.displayName : null,
    user_name_key: type === "User" ? String(attributes.userName).toLowerCase() : null,
    attributes: JSON.stringify(attributes),
    updated_at: ctx.clock().toISOString(),
    version: current.version + 1,
  };
  const guarded = type === "User" && takesAwayAnAdmin(currentAttributes, attributes);
  try {
    await ctx.store.db.transaction().execute(async (trx) => {
      const write = async () => {
        if (!(await repo.replaceResource(trx, row, current.version))) {
          throw new ChangedMeanwhile("resource", "updated");
        }
        if (credential) await saveCredential(trx, id, credential, ctx.clock());
        if (voidLinks) await voidPendingLinks(trx, id, ctx.clock());
        if (revokeSessions) await revokeUserSessions(trx, id, ctx.clock());
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
    uniqueness(error, attributes);
  }
  // read again: the change may have ended sessions or set a password
  const written = await repo.findResource(ctx.store.db, id, ctx.clock().toISOString());
  return {
    body: toRepresentation(ctx, written ?? { ...row, first_login: null }, principal),
    etag: etagOf(row.version),
  };
}

export function deleteResource(ctx: ServiceContext, principal: Principal, id: string, ifMatch?: string) {
  return retryWhenChanged(() => deleteResourceOnce(ctx, principal, id, ifMatch));
}

async function deleteResourceOnce(ctx: ServiceContext, principal: Principal, id: string, ifMatch?: string) {
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
    () => deleteRecorded(ctx, principal, { id, current, attributes, isUser, record, ifMatch }),
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
    ifMatch: string | undefined;
  },
) {
  const { id, current, attributes, isUser, ifMatch } = input;
  assertCan(principal, "delete", current.resource_type, { id, roles: isUser ? roleNames(attributes) : [] });
  assertIfMatch(ifMatch, etagOf(current.version));
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
