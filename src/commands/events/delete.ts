import type { Command } from "commander";
import type { Context } from "../../cli/command-context.js";
import { UsageError } from "../../cli/errors.js";
import { refuseBeforeAsking } from "../../cli/permissions.js";
import * as events from "../../contract/events.js";
import { examples, namesFrom, tolerating, withContext } from "../verb-helpers.js";
import { eventPages } from "./list.js";

interface DeleteOptions {
  ignoreNotFound?: boolean;
  filter?: string;
  dryRun?: boolean;
}

/** How many codes a dry run and a confirmation name. */
const FIRST_SHOWN = 10;

/** Before a question (or a dry run): whether the caller may delete events, as the server will check it. */
async function refuseNonWriters(ctx: Context): Promise<void> {
  await refuseBeforeAsking(ctx, "events:write", {}, { verb: "delete", about: "events" });
}

/**
 * `events delete --filter EXPR`: every event the filter selects, deleted through
 * POST /events/deletions a thousand codes at a time, after a count and a confirmation.
 */
async function deleteByFilter(ctx: Context, filter: string, options: DeleteOptions): Promise<void> {
  const selected: { code: string; name: string }[] = [];
  for await (const page of eventPages(ctx, { filter, all: true, progress: false })) {
    for (const event of page as { code: string; name: string }[]) selected.push({ code: event.code, name: event.name });
  }
  const named = `${selected
    .slice(0, FIRST_SHOWN)
    .map((e) => e.code)
    .join(", ")}${selected.length > FIRST_SHOWN ? `, and ${selected.length - FIRST_SHOWN} more` : ""}`;
  if (selected.length === 0) {
    ctx.info(`No event matches ${JSON.stringify(filter)}; nothing to delete.`);
    await ctx.print({ matched: 0, deleted: 0, notFound: 0 });
    return;
  }
  if (options.dryRun || !ctx.globals.yes) await refuseNonWriters(ctx);
  if (options.dryRun) {
    ctx.info(`Dry run (nothing written): would delete ${selected.length} event(s): ${named}.`);
    await ctx.print({ dryRun: true, matched: selected.length, first: selected.slice(0, FIRST_SHOWN) });
    return;
  }
  await ctx.confirm(`Delete ${selected.length} event(s) matching ${JSON.stringify(filter)}: ${named}?`);
  const client = await ctx.client();
  let deleted = 0;
  let notFound = 0;
  for (let at = 0; at < selected.length; at += events.EVENT_BATCH_MAX) {
    const codes = selected.slice(at, at + events.EVENT_BATCH_MAX).map((e) => e.code);
    const { data } = await client.call(events.deleteEvents, { body: { codes } });
    deleted += data.deleted;
    notFound += data.notFound;
  }
  ctx.info(`Deleted ${deleted} of ${selected.length} event(s)${notFound ? `; ${notFound} were gone already` : ""}.`);
  await ctx.print({ matched: selected.length, deleted, notFound });
}

async function deleteEvents(ctx: Context, codes: string[], options: DeleteOptions): Promise<void> {
  if (options.filter !== undefined && codes.length > 0)
    throw new UsageError("Name the events to delete, or give --filter; not both.");
  if (options.filter === undefined && codes.length === 0) {
    throw new UsageError("Name the events to delete, or select them with --filter EXPR.");
  }
  if (options.dryRun && options.filter === undefined) throw new UsageError("--dry-run goes with --filter.");
  // `--filter "$FILTER"` with FILTER unset: the server reads no filter as every event
  if (options.filter?.trim() === "") {
    throw new UsageError(
      "--filter is empty, which would select every event; give the expression (every event: --filter 'code pr').",
    );
  }
  ctx.requireCredential();
  if (options.filter !== undefined) return deleteByFilter(ctx, options.filter, options);
  const client = await ctx.client();
  // every code is looked up before anything is deleted: an unknown one stops the whole command
  const found = [];
  for (const code of await namesFrom(ctx, codes, "events")) {
    const current = await tolerating(
      "not_found",
      options.ignoreNotFound,
      () => client.call(events.getEvent, { params: { code } }),
      async () => {
        ctx.info(`No event ${code}; nothing to delete.`);
        return undefined;
      },
    );
    if (current) found.push(current);
  }
  if (found.length === 0) return;
  if (!ctx.globals.yes) await refuseNonWriters(ctx);
  await ctx.confirm(`Delete ${found.map((e) => `event ${e.data.code} (${e.data.name})`).join(", ")}?`);
  for (const current of found) {
    await tolerating(
      "not_found",
      options.ignoreNotFound,
      () => client.call(events.deleteEvent, { params: { code: current.data.code }, ifMatch: current.etag }),
      async () => undefined,
    );
    ctx.info(`Deleted event ${current.data.code}.`);
  }
}

export function register(group: Command, io: Context["io"]): void {
  group
    .command("delete [codes...]")
    .description(
      "delete events by code ('-': read from stdin, one a line), or every event --filter selects, in batches (asks first; --yes without a terminal)",
    )
    .option("--ignore-not-found", "an event already gone is success")
    .option("--filter <expr>", "delete every event this filter selects, a thousand a request")
    .option("--dry-run", "with --filter: print how many events it selects and the first codes; delete nothing")
    .addHelpText(
      "after",
      examples(
        "bizctl events delete KICKOFF",
        "bizctl events delete KICKOFF <code> --yes --ignore-not-found",
        "bizctl events delete --filter 'code sw \"CI-\"' --dry-run",
        "bizctl events list --filter 'code sw \"CI-\"' --query '[].code' -o table | bizctl events delete - --yes",
      ),
    )
    .action(withContext(io, deleteEvents));
}
