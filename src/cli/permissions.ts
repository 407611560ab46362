import * as auth from "../contract/auth.js";
import { decide, type OperationId, type Target, type Words } from "../contract/policy/index.js";
import type { Context } from "./command-context.js";
import { CliError, EXIT } from "./errors.js";

/** Who the credential acts for, as the server sees it now: id, user name and roles. */
export async function caller(ctx: Context) {
  return (await (await ctx.client()).call(auth.isLogged, {})).data.user;
}

/**
 * Before a question or a confirmation: whether the caller may do what it asks about at all, as
 * the access policy the server enforces says (contract/policy), so that nobody answers a prompt
 * only to be refused. The roles come from the server (`GET /auth/isLogged`, what `auth status`
 * shows: a profile's stored roles may be stale), and the server still decides the request itself.
 * `words.about` names the target in the refusal ("Only an admin may delete users, and your
 * account is member: ask an admin to do it."). Returns the caller.
 */
export async function refuseBeforeAsking(
  ctx: Context,
  operation: OperationId,
  target: Target,
  words: Words & { about: string },
): Promise<Awaited<ReturnType<typeof caller>>> {
  const me = await caller(ctx);
  const { refusal } = decide({ userId: me.id, roles: me.roles }, operation, target, { scopes: false, words });
  if (!refusal) return me;
  throw new CliError(refusal.message, EXIT.forbidden, refusal.code);
}

/** Whether the caller may do `operation` (on `target`), as the access policy says; the server still decides. */
export async function callerMay(ctx: Context, operation: OperationId, target: Target = {}): Promise<boolean> {
  const me = await caller(ctx);
  return decide({ userId: me.id, roles: me.roles }, operation, target, { scopes: false }).allowed;
}
