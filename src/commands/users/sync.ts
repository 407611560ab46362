import { createHash } from "node:crypto";
import { readFile, writeFile } from "node:fs/promises";
import type { Command } from "commander";
import type { Context } from "../../cli/command-context.js";
import { CliError, EXIT, UsageError } from "../../cli/errors.js";
import { reportsAsObject } from "../../cli/import-summary.js";
import { Progress } from "../../cli/progress.js";
import { patchOf } from "../../cli/user-merge.js";
import { parseRenames, readUsers, type UserLine, type UsersFormat } from "../../cli/user-records.js";
import type { ApiClient } from "../../client/client.js";
import { ApiError } from "../../client/errors.js";
import * as bulk from "../../contract/bulk.js";
import * as resources from "../../contract/resources.js";
import { serviceProviderConfig } from "../../contract/scim-discovery.js";
import { collect, examples, wholeNumber, withContext } from "../verb-helpers.js";
import { makePlan, PLAN_COLUMNS, planLine, planRows, type SyncPlan } from "./sync-plan.js";

type Attributes = Record<string, unknown>;

interface SyncOptions {
  source: string;
  plan?: string | boolean;
  apply?: string;
  map?: string[];
  deleteMissingAfter?: string;
  format?: string;
}

const SOURCE = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

/**
 * Every User of the directory, a page of LIST_COUNT.max at a time: one read, however many the
 * file lists. Each page after the first starts after the last id read (`id gt`, the list's own
 * order), so the server walks the id index from there rather than skipping an offset: the read is
 * linear in the directory, where offsets made it quadratic.
 */
async function wholeDirectory(ctx: Context, client: ApiClient): Promise<Attributes[]> {
  const progress = new Progress(ctx, "users read");
  const users: Attributes[] = [];
  const count = resources.LIST_COUNT.max;
  let total: number | undefined;
  for (let after: string | undefined; ; ) {
    const { data } = await client.call(resources.listResources, {
      query: { resourcetypes: "User", count, ...(after !== undefined && { filter: `id gt ${JSON.stringify(after)}` }) },
    });
    const page = data.Resources as Attributes[];
    users.push(...page);
    // the first page's total is the directory's; a later page's counts only what is after it
    total ??= data.totalResults;
    progress.update(users.length, Math.max(total, users.length));
    if (page.length < count) break;
    after = String(page[page.length - 1]?.id);
  }
  progress.done();
  return users;
}

type Operation = { method: string; path: string; bulkId: string; version?: string; data?: unknown };
type Counts = { created: number; updated: number; deactivated: number; deleted: number };

/** The plan as /Bulk operations, in its order: creates (which share commits), updates, deactivations, deletions. */
function operationsOf(plan: SyncPlan): Operation[] {
  const at = (id: string) => `/Resources/${encodeURIComponent(id)}`;
  const version = (v?: string) => (v ? { version: v } : {});
  return [
    ...plan.creates.map((c) => ({
      method: "POST",
      path: "/Resources",
      bulkId: `create:${c.line}`,
      data: { ...c.user, resourceType: "User" },
    })),
    ...plan.updates.map((u) => ({
      method: "PATCH",
      path: at(u.id),
      bulkId: `update:${u.line}`,
      ...version(u.version),
      data: patchOf(u.changes),
    })),
    ...plan.deactivations.map((d) => ({
      method: "PATCH",
      path: at(d.id),
      bulkId: `deactivate:${d.userName}`,
      ...version(d.version),
      data: patchOf([{ attribute: "active", old: true, new: false }]),
    })),
    ...plan.deletions.map((d) => ({
      method: "DELETE",
      path: at(d.id),
      bulkId: `delete:${d.userName}`,
      ...version(d.version),
    })),
  ];
}

/** The users of a plan that changed since it was made (another version, or a name taken meanwhile). */
function changedSince(plan: SyncPlan, directory: Attributes[]): string[] {
  const byId = new Map(directory.map((user) => [String(user.id), user]));
  const names = new Set(directory.map((user) => String(user.userName).toLowerCase()));
  const changed: string[] = [];
  for (const item of [...plan.updates, ...plan.deactivations, ...plan.deletions]) {
    const current = byId.get(item.id);
    const version = (current?.meta as { version?: string } | undefined)?.version;
    if (!current || version !== item.version) changed.push(item.userName);
  }
  for (const create of plan.creates) if (names.has(create.userName.toLowerCase())) changed.push(create.userName);
  return changed;
}

/** Carries the plan out through POST /Bulk, a batch per request; what fails is told by line or userName. */
async function carryOut(ctx: Context, client: ApiClient, plan: SyncPlan, counts: Counts): Promise<void> {
  const { data: config } = await client.call(serviceProviderConfig, {});
  const perBatch = Math.min(500, config.bulk.maxOperations);
  const maxBytes = config.bulk.maxPayloadSize - 1024;
  const operations = operationsOf(plan);
  const progress = new Progress(ctx, "changes");
  let done = 0;
  const send = async (batch: Operation[]) => {
    if (batch.length === 0) return;
    const { data } = await client.call(bulk.bulk, { body: { schemas: [bulk.BULK_URN.request], Operations: batch } });
    for (const result of data.Operations) {
      const [kind, where] = String(result.bulkId).split(/:(.*)/s) as [string, string];
      if (/^2\d\d$/.test(result.status)) {
        if (kind === "create") counts.created++;
        else if (kind === "update") counts.updated++;
        else if (kind === "deactivate") counts.deactivated++;
        else counts.deleted++;
        continue;
      }
      const response = (result.response ?? {}) as { code?: string; detail?: string };
      const line = kind === "create" || kind === "update" ? Number(where) : 0;
      const userName =
        kind === "create"
          ? plan.creates.find((c) => c.line === line)?.userName
          : kind === "update"
            ? plan.updates.find((u) => u.line === line)?.userName
            : where;
      plan.failures.push({
        line,
        ...(userName && { userName }),
        problem: response.code ?? `http_${result.status}`,
        message: `${kind}: ${response.detail ?? `status ${result.status}`}`,
      });
    }
    done += batch.length;
    progress.update(done, operations.length);
  };
  const batches: Operation[][] = [[]];
  let bytes = 0;
  for (const operation of operations) {
    const size = Buffer.byteLength(JSON.stringify(operation)) + 1;
    const batch = batches[batches.length - 1] as Operation[];
    if (batch.length >= perBatch || bytes + size > maxBytes) {
      batches.push([]);
      bytes = 0;
    }
    (batches[batches.length - 1] as Operation[]).push(operation);
    bytes += size;
  }
  // two requests out at a time, as users import sends them: the server never waits for the CLI;
  // a plan names each user once, so no two batches touch one user
  let next = 0;
  const worker = async () => {
    while (next < batches.length) await send(batches[next++] as Operation[]);
  };
  try {
    await Promise.all([worker(), worker()]);
  } finally {
    progress.done();
  }
}

async function readPlan(file: string): Promise<SyncPlan> {
  let plan: SyncPlan;
  try {
    plan = JSON.parse(await readFile(file, "utf8")) as SyncPlan;
  } catch (error) {
    throw new UsageError(`Cannot read the plan ${file}: ${error instanceof Error ? error.message : String(error)}`);
  }
  if (plan?.plan !== "bizctl users sync" || plan.version !== 1) {
    throw new UsageError(`${file} is not a plan of 'bizctl users sync --plan'.`);
  }
  return plan;
}

function exitCodeOf(plan: SyncPlan): number {
  const problems = new Set(plan.failures.map((failure) => failure.problem));
  if (problems.size === 1 && problems.has("conflict")) return EXIT.conflict;
  if ([...problems].every((p) => p === "invalid_line" || p === "validation_failed")) return EXIT.validation;
  return EXIT.failure;
}

async function sync(ctx: Context, file: string, options: SyncOptions): Promise<void> {
  ctx.requireCredential();
  if (!SOURCE.test(options.source)) {
    throw new UsageError("--source is a name of letters, digits, '.', '_' or '-' (at most 64), e.g. --source hr.");
  }
  if (options.plan !== undefined && options.apply !== undefined)
    throw new UsageError("--plan and --apply exclude each other.");
  if (options.format !== undefined && !["csv", "ndjson"].includes(options.format)) {
    throw new UsageError("--format is csv or ndjson.");
  }
  const days = wholeNumber(options.deleteMissingAfter, "--delete-missing-after", 0, 36_500);
  const renames = parseRenames(options.map ?? []);
  if (file === "-" && options.apply === undefined)
    throw new UsageError("users sync reads a file, not stdin: its plan names the file it was made from.");
  const content = await readFile(file).catch((error: Error) => {
    throw new UsageError(`Cannot read ${file}: ${error.message}`);
  });
  const fileSha256 = createHash("sha256").update(content).digest("hex");
  const client = await ctx.client();

  let plan: SyncPlan;
  if (options.apply !== undefined) {
    plan = await readPlan(options.apply);
    if (plan.source !== options.source) {
      throw new UsageError(`The plan is for the source '${plan.source}', not '${options.source}'.`);
    }
    if (plan.fileSha256 !== fileSha256) {
      throw new UsageError(`${file} is not the file the plan was made from (it changed since?): make a new plan.`);
    }
    const changed = changedSince(plan, await wholeDirectory(ctx, client));
    if (changed.length > 0) {
      throw new CliError(
        `${changed.length} user(s) of the plan changed since it was made (${changed.slice(0, 5).join(", ")}${changed.length > 5 ? ", …" : ""}): nothing was changed; make a new plan.`,
        EXIT.conflict,
        "plan_outdated",
      );
    }
  } else {
    const lines: UserLine[] = [];
    for await (const line of readUsers(ctx.io, file, { renames, format: options.format as UsersFormat | undefined })) {
      lines.push(line);
    }
    const directory = await wholeDirectory(ctx, client);
    plan = makePlan(lines, directory, {
      source: options.source,
      fileSha256,
      ...(days !== undefined && { deleteMissingAfterDays: Number(days) }),
    });
  }
  if (plan.leaversHeld) ctx.info(`Nobody deactivated: ${plan.leaversHeld}.`);

  if (options.plan !== undefined) {
    const target = typeof options.plan === "string" ? options.plan : `sync-${options.source}.plan.json`;
    await writeFile(target, `${JSON.stringify(plan, null, 2)}\n`);
    if (reportsAsObject(ctx)) await ctx.print(plan);
    else {
      ctx.info(planLine(plan));
      const rows = planRows(plan);
      if (rows.length > 0) await ctx.print(rows, PLAN_COLUMNS);
      if (plan.failures.length > 0) await ctx.print(plan.failures, ["line", "userName", "problem", "message"]);
    }
    ctx.info(`Plan written to ${target}: nothing changed. Carry it out with --apply ${target}.`);
    return;
  }

  const failedBefore = plan.failures.length;
  const counts: Counts = { created: 0, updated: 0, deactivated: 0, deleted: 0 };
  try {
    await carryOut(ctx, client, plan, counts);
  } catch (error) {
    if (!(error instanceof ApiError) || error.status !== 401) throw error;
    // credentials refused meanwhile (a token revoked or expired): say what was done, no more
    const done = counts.created + counts.updated + counts.deactivated + counts.deleted;
    throw new CliError(
      `${error.problem.detail} Stopped: ${done === 0 ? "nothing was changed" : `${counts.created} created, ${counts.updated} updated, ${counts.deactivated} deactivated and ${counts.deleted} deleted before that; the rest not done`}.`,
      EXIT.unauthenticated,
      error.problem.code,
    );
  }
  const summary = {
    source: plan.source,
    read: plan.read,
    ...counts,
    unchanged: plan.unchanged,
    failed: plan.failures.length,
    failures: plan.failures,
  };
  if (reportsAsObject(ctx)) await ctx.print(summary);
  else {
    ctx.info(
      `Synced source ${plan.source}: ${counts.created} created, ${counts.updated} updated, ${counts.deactivated} deactivated, ${counts.deleted} deleted, ${plan.unchanged} unchanged, ${plan.failures.length} failed, of ${plan.read} read.`,
    );
    if (plan.failures.length > 0) await ctx.print(plan.failures, ["line", "userName", "problem", "message"]);
  }
  if (plan.failures.length === 0) return;
  const written = counts.created + counts.updated + counts.deactivated + counts.deleted;
  throw new CliError(
    `${plan.failures.length} change(s) failed (${failedBefore} line(s) of the file); ${written === 0 ? "nothing was changed" : `the other ${written} change(s) were made`}.`,
    exitCodeOf(plan),
    "sync_incomplete",
  );
}

export function register(group: Command, io: Context["io"]): void {
  group
    .command("sync <file>")
    .description(
      "make the users of a source match an HR file (CSV, NDJSON or JSON): create, merge, deactivate leavers; --plan first",
    )
    .requiredOption("--source <name>", "the name of this sync (hr): it changes the users of this source only")
    .option(
      "--plan [planfile]",
      "print the plan and write it to PLANFILE (default sync-SOURCE.plan.json); change nothing",
    )
    .option(
      "--apply <planfile>",
      "carry out exactly that plan; refused, nothing changed, if a user in it changed since",
    )
    .option("--map <column=attribute>", "read the column (or member) COLUMN as ATTRIBUTE (repeatable)", collect)
    .option("--delete-missing-after <days>", "delete a leaver deactivated at least DAYS days ago (default: keep)")
    .option("--format <format>", "csv or ndjson (default: from the extension, else from the first character)")
    .addHelpText(
      "after",
      `
The file is read as 'users import' reads it (headers in any case and common HR spellings; the
e-mail as userName without a user-name column). The users of the source that the file no longer
lists are deactivated (active=false: logins refused, sessions ended); a user the file lists again
is reactivated. Only the attributes the file has columns for change; a user it leaves as it is
gets no write. Users of another source are never touched; a user made by hand is adopted when
the file lists it, and never deactivated.
${examples(
  "bizctl users sync <hr-csv> --source hr --plan plan.json",
  "bizctl users sync <hr-csv> --source hr --apply plan.json",
  "bizctl users sync <hr-csv> --source hr --map 'Work Email=emails[0].value' --delete-missing-after 30",
)}`,
    )
    .action(withContext(io, sync));
}
