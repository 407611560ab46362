import {
  ADMIN_ROLES,
  decide,
  isOperationId,
  lastAdminReason,
  OPERATION_IDS,
  type Subject,
} from "../../contract/policy/index.js";
import { ProblemError } from "../problem-error.js";
import { listApiTokens } from "../store/api-tokens-repo.js";
import { countActiveAdmins, findAccountById } from "../store/users-repo.js";
import { readScopes } from "./api-tokens.js";
import { roleSourcesOf } from "./scim-group-representation.js";
import type { Principal, ServiceContext } from "./service-context.js";

// `access explain` (spec 1.11): the policy's own decide() run for the User as it is now, so the
// answer and its reasons are the ones the server would act on, never a second reading of the rules.

async function accountOf(ctx: ServiceContext, id: string) {
  const account = await findAccountById(ctx.store.db, id);
  if (!account) throw new ProblemError("not_found", `No user with id ${id}.`);
  return account;
}

/** The user's live API token `id`: another user's token scopes are admin's to see (tokens:list-other). */
async function tokenOf(ctx: ServiceContext, principal: Principal, userId: string, id: string) {
  const asked = decide(principal, "tokens:list-other", { id: userId });
  if (!asked.allowed && principal.userId !== userId) {
    throw new ProblemError("forbidden", "Only an admin may see the scopes of another user's API token.");
  }
  const token = (await listApiTokens(ctx.store.db, userId)).find((row) => row.id === id);
  if (!token) throw new ProblemError("not_found", `The user has no live API token with id ${id}.`);
  return { id: token.id, name: token.name, scopes: readScopes(token.scopes) };
}

export async function explainAccess(
  ctx: ServiceContext,
  principal: Principal,
  userId: string,
  query: { operation: string; token?: string; target?: string },
) {
  const operation = query.operation;
  if (!isOperationId(operation)) {
    throw new ProblemError(
      "validation_failed",
      `Unknown operation '${operation}'. Valid operations: ${OPERATION_IDS.join(", ")}.`,
    );
  }
  const account = await accountOf(ctx, userId);
  const token = query.token === undefined ? undefined : await tokenOf(ctx, principal, account.id, query.token);
  const target = query.target === undefined ? undefined : await accountOf(ctx, query.target);
  const subject: Subject = {
    userId: account.id,
    roles: account.roles,
    ...(token && { delegated: "apiToken" as const, scopes: token.scopes }),
  };
  const decision = decide(subject, operation, target ? { id: target.id, roles: target.roles } : {});
  const lastAdmin =
    target && decision.allowed
      ? lastAdminReason(operation, target, await countActiveAdmins(ctx.store.db, ADMIN_ROLES))
      : undefined;
  return {
    id: account.id,
    userName: account.userName,
    operation,
    allowed: decision.allowed,
    roles: await roleSourcesOf(ctx, account.id, account.directRoles),
    ...(token && { token }),
    ...(target && { target: { id: target.id, userName: target.userName, roles: target.roles } }),
    reasons: lastAdmin ? [...decision.reasons, lastAdmin] : decision.reasons,
    ...(decision.refusal && { refusal: { code: decision.refusal.code, message: decision.refusal.message } }),
  };
}
