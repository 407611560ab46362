import type { Context } from "../../cli/command-context.js";
import * as audit from "../../contract/audit.js";
import type { QueryOf } from "../../contract/route.js";

export type AuditPageQuery = QueryOf<typeof audit.listAudit>;

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
