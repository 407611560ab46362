import type { Context } from "../../cli/context.js";
import { render } from "../../cli/output.js";
import { ApiError } from "../../client/errors.js";
import * as audit from "../../contract/audit.js";

/** What a table shows of a record; every field goes to JSON, NDJSON and CSV. */
export const AUDIT_COLUMNS = [
  "time",
  "action",
  "outcome",
  "actor.userName",
  "target.type",
  "target.name",
  "clientIp",
  "id",
];

export const AUDIT_CSV_COLUMNS = [
  "id",
  "time",
  "action",
  "outcome",
  "actor.id",
  "actor.userName",
  "actor.consumerId",
  "target.type",
  "target.id",
  "target.name",
  "requestId",
  "clientIp",
  "userAgent",
];

export interface AuditPageQuery {
  filter?: string;
  since?: string;
  until?: string;
  order?: "newest" | "oldest";
  pagesize?: string;
  cursor?: string;
}

/** The cursor of a response's Link `next`, if it has one. */
export function nextCursor(link: string | undefined): string | undefined {
  const next = link?.split(/,\s*(?=<)/).find((part) => /;\s*rel="next"/.test(part));
  const target = next && /^<([^>]*)>/.exec(next.trim())?.[1];
  return target ? (new URL(target, "http://link.invalid").searchParams.get("cursor") ?? undefined) : undefined;
}

/** One page of GET /audit, with the cursor of the next one. */
export async function auditPage(ctx: Context, query: AuditPageQuery) {
  const client = await ctx.client();
  const { data, headers } = await client.call(audit.listAudit, { query });
  return { records: data.data, last: data.last, next: nextCursor(headers.link) };
}

/** What `users get` shows of a user's recent activity (a table under the user). */
const ACTIVITY_COLUMNS = ["time", "action", "outcome", "actor.userName", "clientIp"];

/**
 * The last few records where the user is the actor or the target, as a table; nothing when
 * the caller may not read them (the trail is best-effort extra here, not the command's result).
 */
export async function recentActivity(ctx: Context, userId: string, count = 5): Promise<string> {
  let records: unknown[];
  try {
    const filter = `actor.id eq ${JSON.stringify(userId)} or target.id eq ${JSON.stringify(userId)}`;
    records = (await auditPage(ctx, { filter, pagesize: String(count) })).records;
  } catch (error) {
    if (error instanceof ApiError) return "";
    throw error;
  }
  if (records.length === 0) return "\nRecent activity: none recorded.\n";
  const table = await render(records, {
    format: "table",
    columns: ACTIVITY_COLUMNS,
    width: ctx.io.stdout.columns ?? 100,
    color: ctx.color,
    terminal: Boolean(ctx.io.stdout.isTTY),
  });
  return `\nRecent activity:\n${table}`;
}
