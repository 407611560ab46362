import { ProblemError } from "../problem-error.js";
import type { ServiceContext } from "./service-context.js";

// What deleted Users and deleted Groups share (`--retain-deleted`, spec 1.10): when one deleted
// now is purged, and the refusal of a name a kept one holds, which points at the way out.

const DAY_MS = 24 * 3600 * 1000;

/** When something deleted now was deleted and is purged; undefined when the server keeps nothing. */
export function retention(ctx: ServiceContext): { deletedAt: string; purgeAfter: string } | undefined {
  if (ctx.retainDeletedDays <= 0) return undefined;
  const now = ctx.clock();
  return {
    deletedAt: now.toISOString(),
    purgeAfter: new Date(now.getTime() + ctx.retainDeletedDays * DAY_MS).toISOString(),
  };
}

/**
 * 409 uniqueness: a deleted user or group holds `what` (a name, an externalId) until its purge,
 * so that its restore cannot collide; the detail says how to restore or purge it.
 */
export function heldByDeleted(
  kind: "user" | "group",
  holder: { id: string; purgeAfter: string },
  what: string,
  path?: string,
): ProblemError {
  const command = `bizctl ${kind}s`;
  return new ProblemError(
    "conflict",
    `A deleted ${kind} (${holder.id}) holds the ${what} until ${holder.purgeAfter}: ` +
      `bring it back with \`${command} restore ${holder.id}\` or free the name with \`${command} purge ${holder.id}\`.`,
    {
      scimType: "uniqueness",
      ...(path !== undefined && { errors: [{ path, message: `is held by a deleted ${kind} until its purge` }] }),
    },
  );
}
