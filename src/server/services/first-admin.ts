import { countsAsActiveAdmin } from "../../contract/policy/index.js";
import { userNameKey } from "../../contract/resources.js";
import { ProblemError } from "../problem-error.js";
import { revokeUserApiTokens } from "../store/api-tokens-repo.js";
import { isUniqueViolation } from "../store/errors.js";
import { findUserByName, insertResource, type ResourceRow, replaceResource } from "../store/resources-repo.js";
import { revokeUserSessions } from "../store/sessions-repo.js";
import { countUsers, lockAdminChanges, roleNames, saveCredential } from "../store/users-repo.js";
import { forgetNameFailures } from "./accounts.js";
import { audit } from "./audit.js";
import { assertAcceptablePassword, hashPassword } from "./passwords.js";
import { resourceId } from "./random-token.js";
import type { ServiceContext } from "./service-context.js";
import { assertEmails, assertUserName } from "./user-fields.js";

// The admins made outside the API, where the database is: the first one (`server init`) and the
// break-glass one (`server recover-admin`).

/**
 * The first admin of a new installation. Refused once any user exists, so that `server init`
 * cannot be used to take over a running deployment.
 */
export async function createFirstAdmin(
  ctx: ServiceContext,
  input: { userName: string; email?: string; password: string; temporary: boolean },
): Promise<{ id: string; userName: string }> {
  assertUserName(input.userName);
  assertEmails(input.email === undefined ? undefined : [{ value: input.email }]);
  if (!input.temporary) {
    await assertAcceptablePassword(input.password, { userName: input.userName }, ctx.passwordPolicy);
  }
  const passwordHash = await hashPassword(input.password);
  const now = ctx.clock();
  const row = newAdminRow(input, now);
  const usersExist = () =>
    new ProblemError("conflict", "Users already exist; server init only creates the first admin.");
  try {
    await ctx.store.db.transaction().execute(async (trx) => {
      // two inits at once: on PostgreSQL both would count no user and both insert (two admins, or
      // a unique violation for one name); the lock makes the second count after the first commits.
      // SQLite's transactions hold the write lock from their start already.
      await lockAdminChanges(trx, ctx.store.dialect);
      if ((await countUsers(trx)) > 0) throw usersExist();
      await insertResource(trx, row);
      await saveCredential(trx, row.id, { passwordHash, firstLogin: input.temporary, issuerRole: "admin" }, now);
      await audit(ctx, trx, {
        action: "user.create",
        target: { type: "User", id: row.id, name: input.userName },
        details: { via: "server init", roles: ["admin"], temporaryPassword: input.temporary },
      });
    });
  } catch (error) {
    // a user of that name made meanwhile by another path (recover-admin) is the same refusal
    if (isUniqueViolation(error)) throw usersExist();
    throw error;
  }
  return { id: row.id, userName: input.userName };
}

function newAdminRow(input: { userName: string; email?: string }, now: Date): ResourceRow {
  const attributes = {
    userName: input.userName.normalize("NFC"),
    displayName: input.userName.normalize("NFC"),
    active: true,
    roles: [{ value: "admin", primary: true }],
    ...(input.email && { emails: [{ value: input.email, type: "work", primary: true }] }),
  };
  return {
    id: resourceId(now),
    resource_type: "User",
    external_id: null,
    display_name: attributes.displayName,
    user_name_key: userNameKey(input.userName),
    attributes: JSON.stringify(attributes),
    created_at: now.toISOString(),
    updated_at: now.toISOString(),
    version: 1,
  };
}

/**
 * `server recover-admin`, the break-glass path: it runs where the database and the secret are,
 * not through the API. The named user becomes an active, unlocked admin whose password is the
 * given temporary one, its sessions ended; a name nobody holds becomes a new admin.
 */
export async function recoverAdmin(
  ctx: ServiceContext,
  input: { userName: string; email?: string; password: string },
): Promise<{ id: string; userName: string; created: boolean }> {
  assertUserName(input.userName);
  assertEmails(input.email === undefined ? undefined : [{ value: input.email }]);
  const passwordHash = await hashPassword(input.password);
  const now = ctx.clock();
  const recovered = await ctx.store.db.transaction().execute(async (trx) => {
    const current = await findUserByName(trx, input.userName);
    const credential = { passwordHash, firstLogin: true, failedLogins: 0, lockedUntil: null, issuerRole: "admin" };
    if (!current) {
      const row = newAdminRow(input, now);
      await insertResource(trx, row);
      await saveCredential(trx, row.id, credential, now);
      await audit(ctx, trx, {
        action: "user.recover_admin",
        target: { type: "User", id: row.id, name: input.userName },
        details: { via: "server recover-admin", created: true, temporaryPassword: true },
      });
      return { id: row.id, userName: input.userName, created: true };
    }
    const attributes = JSON.parse(current.attributes) as Record<string, unknown>;
    const roles = Array.isArray(attributes.roles) ? attributes.roles : [];
    const recovered = {
      ...attributes,
      active: true,
      roles: countsAsActiveAdmin(roleNames(attributes), true) ? roles : [...roles, { value: "admin" }],
    };
    const row = {
      ...current,
      attributes: JSON.stringify(recovered),
      updated_at: now.toISOString(),
      version: current.version + 1,
    };
    await replaceResource(trx, row, current.version);
    await saveCredential(trx, current.id, credential, now);
    await revokeUserSessions(trx, current.id, now);
    await revokeUserApiTokens(trx, current.id, now);
    await audit(ctx, trx, {
      action: "user.recover_admin",
      target: { type: "User", id: current.id, name: String(attributes.userName) },
      details: { via: "server recover-admin", created: false, temporaryPassword: true },
    });
    return { id: current.id, userName: String(attributes.userName), created: false };
  });
  await forgetNameFailures(ctx, recovered.userName);
  return recovered;
}
