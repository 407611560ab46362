import { type ExpressionBuilder, type Insertable, type Kysely, type RawBuilder, sql } from "kysely";
import { effectiveRoles, rolesOfBits } from "../../contract/policy/effective-roles.js";
import { userNameKey } from "../../contract/resources.js";
import { ROLES, type Role } from "../../contract/route.js";
import { voidPendingLinks } from "./reset-tokens-repo.js";
import type { CredentialsTable, ResourcesTable, Schema } from "./schema.js";

export interface Credential {
  passwordHash: string | null;
  firstLogin: boolean;
  failedLogins: number;
  lockedUntil: string | null;
  /** when the password was last set, by anyone */
  passwordChangedAt: string | null;
  /** the role someone else set the password under ('admin', 'support'); null for the user's own */
  issuerRole: string | null;
  /** the last failed login */
  lastFailedAt: string | null;
  /** the e-mail addresses were last set by a person's API token or OAuth grant */
  addressesByDelegate: boolean;
}

export interface UserAccount {
  id: string;
  userName: string;
  displayName?: string;
  /** its effective roles: its own joined with its groups' (contract/policy/effective-roles.ts) */
  roles: Role[];
  /** its own roles, the `roles` attribute */
  directRoles: Role[];
  active: boolean;
  /** where its reset and invitation links are mailed (services/link-mails.ts); none without an address */
  linkAddress?: string;
  /** a User that is not a person (spec 1.9): no password, no second factor, no login; API tokens only */
  serviceAccount: boolean;
  credential: Credential;
}

const VALID_ROLES = new Set<Role>(ROLES);

/** SCIM keeps roles as `[{value}]`; the auth area speaks of role names. */
export function roleNames(attributes: Record<string, unknown>): Role[] {
  const roles = Array.isArray(attributes.roles) ? attributes.roles : [];
  return roles
    .map((r) => (typeof r === "string" ? r : (r as { value?: unknown })?.value))
    .filter((r): r is Role => typeof r === "string" && VALID_ROLES.has(r as Role));
}

/** The address a User's links are mailed to: its primary e-mail, else its first. */
export function linkAddressOf(attributes: Record<string, unknown>): string | undefined {
  const emails = (Array.isArray(attributes.emails) ? attributes.emails : []) as {
    value?: unknown;
    primary?: unknown;
  }[];
  const withValue = emails.filter((email) => typeof email?.value === "string" && email.value !== "");
  const value = (withValue.find((email) => email.primary === true) ?? withValue[0])?.value;
  return typeof value === "string" ? value : undefined;
}

type Row = {
  id: string;
  attributes: string;
  service_account: number;
  password_hash: string | null;
  first_login: number | null;
  failed_logins: number | null;
  locked_until: string | null;
  password_changed_at: string | null;
  issuer_role: string | null;
  last_failed_login_at: string | null;
  addresses_by_delegate: number | null;
  /** the roles the User's groups grant, as a bit mask (groupRolesOf) */
  group_roles?: number | string | null;
};

/**
 * The roles the groups of the User `userId` grant, as a bit mask (ROLE_BITS), in one scalar
 * subquery over the membership index: 0 for a User in no group.
 */
export const groupRolesOf = (userId: RawBuilder<unknown>) =>
  sql<number>`(select coalesce(max(g.grants_admin), 0) + 2 * coalesce(max(g.grants_support), 0) + 4 * coalesce(max(g.grants_member), 0)
    from group_members gm inner join groups g on g.id = gm.group_id where gm.user_id = ${userId})`;

export function toAccount(row: Row): UserAccount {
  const attributes = JSON.parse(row.attributes) as Record<string, unknown>;
  const directRoles = roleNames(attributes);
  return {
    id: row.id,
    userName: String(attributes.userName),
    displayName: typeof attributes.displayName === "string" ? attributes.displayName : undefined,
    roles: effectiveRoles(directRoles, rolesOfBits(row.group_roles)),
    directRoles,
    active: attributes.active !== false,
    linkAddress: linkAddressOf(attributes),
    serviceAccount: row.service_account === 1,
    credential: {
      passwordHash: row.password_hash,
      firstLogin: row.first_login === 1,
      failedLogins: row.failed_logins ?? 0,
      lockedUntil: row.locked_until,
      passwordChangedAt: row.password_changed_at,
      issuerRole: row.issuer_role,
      lastFailedAt: row.last_failed_login_at,
      addressesByDelegate: row.addresses_by_delegate === 1,
    },
  };
}

/** What a credential's check on every request needs of its owner (toCaller()). */
export type Caller = Pick<UserAccount, "id" | "userName" | "displayName" | "roles" | "active"> & {
  credential: Pick<Credential, "firstLogin">;
};

type CallerRow = Pick<Row, "id" | "attributes" | "first_login" | "group_roles">;

/**
 * The owner of a credential as a request's check reads it: toAccount() less the password, the
 * failure counters and the link address, which no request but a login or a reset reads.
 */
export function toCaller(row: CallerRow): Caller {
  const attributes = JSON.parse(row.attributes) as Record<string, unknown>;
  return {
    id: row.id,
    userName: String(attributes.userName),
    displayName: typeof attributes.displayName === "string" ? attributes.displayName : undefined,
    roles: effectiveRoles(roleNames(attributes), rolesOfBits(row.group_roles)),
    active: attributes.active !== false,
    credential: { firstLogin: row.first_login === 1 },
  };
}

/**
 * The columns toCaller() reads. Each column a row brings back is a value better-sqlite3 makes and
 * a property it sets on every request: the Bearer check's read with ACCOUNT_COLUMNS' thirteen
 * took about a third longer than with these four.
 */
export const CALLER_COLUMNS = [
  "resources.id",
  "resources.attributes",
  "credentials.first_login",
  groupRolesOf(sql.ref("resources.id")).as("group_roles"),
] as const;

/** The columns toAccount() reads: a User resource joined with its credentials. */
export const ACCOUNT_COLUMNS = [
  "resources.id",
  "resources.attributes",
  "resources.service_account",
  "credentials.password_hash",
  "credentials.first_login",
  "credentials.failed_logins",
  "credentials.locked_until",
  "credentials.password_changed_at",
  "credentials.issuer_role",
  "credentials.last_failed_login_at",
  "credentials.addresses_by_delegate",
  groupRolesOf(sql.ref("resources.id")).as("group_roles"),
] as const;

function accountQuery(db: Kysely<Schema>) {
  return db
    .selectFrom("resources")
    .leftJoin("credentials", "credentials.user_id", "resources.id")
    .select([...ACCOUNT_COLUMNS])
    .where("resources.resource_type", "=", "User");
}

export async function findAccountByUserName(db: Kysely<Schema>, userName: string) {
  const row = await accountQuery(db).where("resources.user_name_key", "=", userNameKey(userName)).executeTakeFirst();
  return row ? toAccount(row) : undefined;
}

export async function findAccountById(db: Kysely<Schema>, id: string) {
  const row = await accountQuery(db).where("resources.id", "=", id).executeTakeFirst();
  return row ? toAccount(row) : undefined;
}

export async function countUsers(db: Kysely<Schema>): Promise<number> {
  const row = await db
    .selectFrom("resources")
    .select((eb) => eb.fn.countAll<number>().as("n"))
    .where("resource_type", "=", "User")
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/**
 * Writes a user's credential. A new password hash (or none) records who set it (`issuerRole`,
 * null: the user) and voids every pending reset or invitation link of the user, whatever the
 * path that changed it: a link is never worth more than the password it was sent to replace.
 */
export async function saveCredential(
  db: Kysely<Schema>,
  userId: string,
  change: Partial<Omit<Credential, "passwordChangedAt" | "lastFailedAt">> & {
    loggedIn?: boolean;
    failedAt?: Date;
    /** the User was created in this transaction: it has no reset or invitation link to void */
    created?: boolean;
  },
  now: Date,
): Promise<void> {
  const values = {
    ...(change.passwordHash !== undefined && {
      password_hash: change.passwordHash,
      password_changed_at: change.passwordHash === null ? null : now.toISOString(),
      issuer_role: change.issuerRole ?? null,
    }),
    ...(change.loggedIn && { last_login_at: now.toISOString() }),
    ...(change.firstLogin !== undefined && { first_login: change.firstLogin ? 1 : 0 }),
    ...(change.failedLogins !== undefined && { failed_logins: change.failedLogins }),
    ...(change.lockedUntil !== undefined && { locked_until: change.lockedUntil }),
    ...(change.failedAt && { last_failed_login_at: change.failedAt.toISOString() }),
    ...(change.addressesByDelegate !== undefined && { addresses_by_delegate: change.addressesByDelegate ? 1 : 0 }),
    updated_at: now.toISOString(),
  };
  await db
    .insertInto("credentials")
    .values(credentialRow(userId, change, now))
    .onConflict((oc) => oc.column("user_id").doUpdateSet(values))
    .execute();
  if (change.passwordHash !== undefined && !change.created) await voidPendingLinks(db, userId, now);
}

/** The credential row of a user that has none yet (saveCredential's insert; a new User's, written with it). */
export function credentialRow(
  userId: string,
  change: Partial<Omit<Credential, "passwordChangedAt" | "lastFailedAt">> & { loggedIn?: boolean; failedAt?: Date },
  now: Date,
): Insertable<CredentialsTable> {
  return {
    user_id: userId,
    password_hash: change.passwordHash ?? null,
    first_login: change.firstLogin ? 1 : 0,
    failed_logins: change.failedLogins ?? 0,
    locked_until: change.lockedUntil ?? null,
    updated_at: now.toISOString(),
    last_login_at: change.loggedIn ? now.toISOString() : null,
    password_changed_at: change.passwordHash ? now.toISOString() : null,
    issuer_role: change.issuerRole ?? null,
    last_failed_login_at: change.failedAt?.toISOString() ?? null,
    addresses_by_delegate: change.addressesByDelegate ? 1 : 0,
  };
}

/** Records who last set the User's e-mail addresses: a person's delegated credential, or not. */
export async function markAddresses(db: Kysely<Schema>, userId: string, byDelegate: boolean): Promise<void> {
  await db
    .updateTable("credentials")
    .set({ addresses_by_delegate: byDelegate ? 1 : 0 })
    .where("user_id", "=", userId)
    .execute();
}

/**
 * The same password under a stronger hash: the time it was chosen stays; a hash changed meanwhile
 * (a reset during the login) is kept.
 */
export async function replacePasswordHash(
  db: Kysely<Schema>,
  userId: string,
  change: { from: string; to: string },
): Promise<void> {
  await db
    .updateTable("credentials")
    .set({ password_hash: change.to })
    .where("user_id", "=", userId)
    .where("password_hash", "=", change.from)
    .execute();
}

/**
 * Active Users who can log in (a password is set) and hold one of `adminRoles`, their own or a
 * group's: the last-admin rule's count, whose roles the policy names (ADMIN_ROLES). Read from the
 * indexed attribute values, so that it stays one query however many users there are.
 */
export async function countActiveAdmins(db: Kysely<Schema>, adminRoles: readonly Role[]): Promise<number> {
  if (adminRoles.length === 0) return 0;
  const hasValue = (
    eb: ExpressionBuilder<Schema & { r: ResourcesTable }, "r">,
    path: string,
    texts: readonly string[],
  ) =>
    eb.exists(
      eb
        .selectFrom("resource_values as v")
        .select("v.resource_id")
        .whereRef("v.resource_id", "=", "r.id")
        .where("v.path", "=", path)
        .where("v.text_value", "in", texts),
    );
  const row = await db
    .selectFrom("resources as r")
    .innerJoin("credentials as c", "c.user_id", "r.id")
    .select((eb) => eb.fn.countAll<number>().as("n"))
    .where("r.resource_type", "=", "User")
    .where("c.password_hash", "is not", null)
    .where((eb) =>
      eb.or([
        hasValue(eb, "roles.value", adminRoles),
        eb.exists(
          eb
            .selectFrom("group_members as gm")
            .innerJoin("groups as g", "g.id", "gm.group_id")
            .select("gm.user_id")
            .whereRef("gm.user_id", "=", "r.id")
            .where((inner) => inner.or(adminRoles.map((role) => inner(GRANTS_COLUMN[role], "=", 1)))),
        ),
      ]),
    )
    .where((eb) => eb.not(hasValue(eb, "active", ["false"])))
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/** The column of `groups` that says whether a group grants a role. */
const GRANTS_COLUMN = {
  admin: "g.grants_admin",
  support: "g.grants_support",
  member: "g.grants_member",
} as const satisfies Record<Role, `g.grants_${Role}`>;

/** An arbitrary, fixed key of the advisory lock below. */
const ADMIN_CHANGES_LOCK = 4_735_001;

/**
 * Serialises the transactions that may take away an admin, so that two admins demoting each
 * other at once cannot both see the other one remain. SQLite has one writer at a time already.
 */
export async function lockAdminChanges(db: Kysely<Schema>, dialect: "sqlite" | "postgres"): Promise<void> {
  if (dialect === "postgres") await sql`select pg_advisory_xact_lock(${ADMIN_CHANGES_LOCK})`.execute(db);
}
