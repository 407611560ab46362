/**
 * The calls on /Resources that the `resources` verbs and their `users` shorthands both make: a
 * list (one page, or every page), a create that tolerates its own re-run, and a read-merge-write
 * update under If-Match.
 */
import type { Command } from "commander";
import type { Context, MorePages } from "../cli/command-context.js";
import { UsageError } from "../cli/errors.js";
import { Progress } from "../cli/progress.js";
import { QUERY_INTEGER_LIMIT } from "../contract/common.js";
import * as resources from "../contract/resources.js";
import { tolerating, wholeNumber } from "./verb-helpers.js";

export interface ListOptions {
  type?: string;
  filter?: string;
  /** free text over Users, best matches first (the list of `resourcetypes=User` alone) */
  search?: string;
  sortBy?: string;
  sortOrder?: string;
  startIndex?: string;
  count?: string;
  all?: boolean;
  /** false: every page read without a progress bar (a selection read before a question) */
  progress?: boolean;
}

export async function listResources(
  ctx: Context,
  options: ListOptions,
  onMore?: (more: MorePages | undefined) => void,
): Promise<Record<string, unknown>[]> {
  const startIndex = wholeNumber(options.startIndex, "--start-index", 1, QUERY_INTEGER_LIMIT);
  const count = wholeNumber(options.count, "--count", 0, resources.LIST_COUNT.max);
  ctx.requireCredential();
  if (options.sortOrder && !["ascending", "descending"].includes(options.sortOrder)) {
    throw new UsageError("--sort-order is ascending or descending.");
  }
  const client = await ctx.client();
  const query = {
    resourcetypes: options.type,
    filter: options.filter,
    search: options.search,
    sortby: options.sortBy,
    sortorder: options.sortOrder,
    count: count ?? (options.all ? resources.LIST_COUNT.max : undefined),
  };
  if (!options.all) {
    const { data } = await client.call(resources.listResources, {
      query: { ...query, startindex: startIndex },
    });
    const next = Number(data.startIndex) + data.Resources.length;
    const total = Number(data.totalResults);
    onMore?.(
      Number.isFinite(next) && next <= total
        ? { shown: data.Resources.length, total, next: `--start-index ${next}` }
        : undefined,
    );
    return data.Resources;
  }
  const rows: Record<string, unknown>[] = [];
  const progress = options.progress === false ? undefined : new Progress(ctx, "resources");
  for (let start = startIndex ?? 1; ; ) {
    const { data } = await client.call(resources.listResources, { query: { ...query, startindex: start } });
    rows.push(...data.Resources);
    progress?.update(rows.length, data.totalResults);
    start += data.itemsPerPage;
    if (data.itemsPerPage === 0 || start > data.totalResults) break;
  }
  progress?.done();
  return rows;
}

export function listOptions(command: Command): Command {
  return command
    .option("--filter <expr>", "SCIM filter, e.g. 'userName sw \"j\" and active eq true'")
    .option("--sort-by <attr>", "attribute path to sort by")
    .option("--sort-order <order>", "ascending (default) or descending")
    .option("--start-index <n>", "1-based index of the first result")
    .option(
      "--count <n>",
      `results per page (default ${resources.LIST_COUNT.default}, at most ${resources.LIST_COUNT.max})`,
    )
    .option("--all", "fetch every page");
}

export async function createResource(ctx: Context, record: Record<string, unknown>, ifNotExists?: boolean) {
  ctx.checkFieldsBeforeWrite(record.resourceType);
  const client = await ctx.client();
  // only a User has a key of its own (userName): the one conflict a re-run can meet
  return tolerating(
    "conflict",
    ifNotExists && typeof record.userName === "string",
    async () => {
      const { data } = await client.call(resources.createResource, { body: record });
      ctx.info(`Created ${String(data.resourceType)} ${data.id}.`);
      return { data: data as typeof data & Record<string, unknown>, created: true };
    },
    async () => {
      const filter = `userName eq ${JSON.stringify(record.userName)}`;
      const { data } = await client.call(resources.listResources, { query: { resourcetypes: "User", filter } });
      const existing = data.Resources[0] as (typeof data.Resources)[number] & Record<string, unknown>;
      ctx.info(`User ${String(record.userName)} already exists; left as it is.`);
      return { data: existing, created: false };
    },
  );
}

type Attributes = Record<string, unknown>;

/** GET, apply `change`, PUT with If-Match: a concurrent change fails with exit 6 instead of being lost. */
export async function updateResource(ctx: Context, id: string, change: (current: Attributes) => Attributes) {
  const client = await ctx.client();
  const current = await client.call(resources.getResource, { params: { resourceId: id } });
  ctx.checkFieldsBeforeWrite(current.data.resourceType);
  const { meta: _meta, schemas: _schemas, firstLogin: _firstLogin, ...attributes } = current.data as Attributes;
  const { data } = await client.call(resources.replaceResource, {
    params: { resourceId: id },
    body: change(attributes),
    ifMatch: current.etag,
  });
  return data as typeof data & Attributes;
}
