import { setTimeout as sleep } from "node:timers/promises";
import { type Command, Option } from "commander";
import type { Context } from "../../cli/command-context.js";
import { CliError, EXIT, UsageError } from "../../cli/errors.js";
import { type ImportFailure, printImportSummary, zeroCounts } from "../../cli/import-summary.js";
import { Progress } from "../../cli/progress.js";
import { changesOf, patchOf, usersByName, versionOf } from "../../cli/user-merge.js";
import { parseRenames, readUsers, type UserLine, type UsersFormat } from "../../cli/user-records.js";
import { ApiError } from "../../client/errors.js";
import * as bulk from "../../contract/bulk.js";
import { serviceProviderConfig } from "../../contract/scim-discovery.js";
import { collect, examples, wholeNumber, withContext } from "../verb-helpers.js";
import { DryRun } from "./import-dry-run.js";

/** As `events import --on-conflict`: a userName that exists (or came earlier in the file). */
const ON_CONFLICT = ["fail", "skip", "update"] as const;
export type OnConflict = (typeof ON_CONFLICT)[number];

interface ImportOptions {
  onConflict: OnConflict;
  map?: string[];
  invite?: boolean;
  inviteRate?: string;
  batchSize?: string;
  format?: string;
  dryRun?: boolean;
}

type Failure = ImportFailure;

type Operation = { method: string; path: string; bulkId?: string; version?: string; data?: unknown };
export type Pending = { line: number; userName?: string; operations: Operation[]; bytes: number };
type Attributes = Record<string, unknown>;

const DEFAULT_BATCH = 500;
const DEFAULT_INVITE_RATE = 50;

/** The problem code of a failed operation, and its message. */
function problemOf(result: { status: string; response?: unknown }): { problem: string; message: string } {
  const response = (result.response ?? {}) as { code?: string; detail?: string };
  return { problem: response.code ?? `http_${result.status}`, message: response.detail ?? `status ${result.status}` };
}

/** What makes the Users of a batch unique in the directory: userNames and externalIds, lower-cased. */
function keysOf(batch: Pending[]): Set<string> {
  const keys = new Set<string>();
  for (const pending of batch) {
    if (pending.userName) keys.add(`userName:${pending.userName.toLowerCase()}`);
    const externalId = (pending.operations[0]?.data as Attributes | undefined)?.externalId;
    if (externalId !== undefined && externalId !== null) keys.add(`externalId:${String(externalId).toLowerCase()}`);
  }
  return keys;
}

/** Whether a User has an e-mail address an invitation can go to. */
function hasAddress(user: Record<string, unknown>): boolean {
  const emails = Array.isArray(user.emails) ? (user.emails as { value?: unknown }[]) : [];
  return emails.some((email) => typeof email?.value === "string" && email.value.trim() !== "");
}

/** The exit code that says most about the failures: all of one kind says which, else 1. */
function exitCodeOf(failures: Failure[]): number {
  const codes = new Set(failures.map((failure) => failure.problem));
  if (codes.size !== 1) return EXIT.failure;
  const [code] = codes;
  if (code === "validation_failed" || code === "invalid_line" || code === "weak_password") return EXIT.validation;
  if (code === "conflict") return EXIT.conflict;
  if (code === "forbidden") return EXIT.forbidden;
  return EXIT.failure;
}

/**
 * Creates the users of a CSV or NDJSON file through POST /Bulk, a batch per request; with
 * --invite each batch also holds an invitation per user (`/Resources/bulkId:…/invitation`),
 * paced to --invite-rate. Prints a summary and the failures only, with their line numbers.
 */
async function importUsers(ctx: Context, file: string, options: ImportOptions): Promise<void> {
  ctx.requireCredential();
  const renames = parseRenames(options.map ?? []);
  if (options.format !== undefined && !["csv", "ndjson"].includes(options.format)) {
    throw new UsageError("--format is csv or ndjson.");
  }
  const rate = Number(wholeNumber(options.inviteRate, "--invite-rate", 1, 100_000) ?? DEFAULT_INVITE_RATE);
  const client = await ctx.client();
  const { data: config } = await client.call(serviceProviderConfig, {});
  const perBatch = Math.min(
    Number(wholeNumber(options.batchSize, "--batch-size", 1, bulk.BULK_MAX_OPERATIONS) ?? DEFAULT_BATCH),
    config.bulk.maxOperations,
  );
  // room for the envelope of the request beside its operations
  const maxBytes = config.bulk.maxPayloadSize - 1024;
  const progress = new Progress(ctx, "users");
  const failures: Failure[] = [];
  const counts = zeroCounts();
  let seen = 0;
  let invited = 0;
  let unchanged = 0;
  const dryRun = new DryRun(client, options.onConflict, counts, failures, () => unchanged++);
  let batch: Pending[] = [];
  let batchOperations = 0;
  let batchBytes = 0;
  const started = Date.now();

  type Answer = { Operations: { bulkId?: string; status: string; response?: unknown }[] };

  /** POST /Bulk of a batch: its answer, or the ApiError that refused the request whole. */
  const send = async (sent: Pending[]): Promise<Answer | ApiError> => {
    // the creates first, then the invitations: consecutive creates share a commit on the server
    const operations = sent.flatMap((p) => p.operations);
    const invitation = (operation: Operation) => operation.path.endsWith("/invitation");
    try {
      const { data } = await client.call(bulk.bulk, {
        body: {
          schemas: [bulk.BULK_URN.request],
          Operations: [...operations.filter((o) => !invitation(o)), ...operations.filter(invitation)],
        },
      });
      return data;
    } catch (error) {
      // a refused request (a line too large for one) fails its lines, told; a server out of reach
      // or credentials it no longer takes stop the import, the lines before it imported
      if (!(error instanceof ApiError) || error.status >= 500 || error.status === 401) throw error;
      return error;
    }
  };

  // Without --invite (paced per batch), a batch goes out while the one before it is still being
  // answered, so that the server never waits for the CLI to read and send the next; the answers
  // are handled in the file's order. A batch naming a userName or externalId of the batch in
  // flight waits for it: the earlier line still comes first, as it did one batch at a time.
  let inFlight: { keys: Set<string>; done: Promise<void> } | undefined;
  const flush = async () => {
    if (batch.length === 0) return;
    const sent = batch;
    batch = [];
    batchOperations = 0;
    batchBytes = 0;
    if (options.dryRun) {
      await dryRun.check(sent);
      progress.update(seen);
      return;
    }
    const keys = keysOf(sent);
    const previous = inFlight;
    if (previous && (options.invite || [...keys].some((key) => previous.keys.has(key)))) await previous.done;
    const answer = send(sent);
    const done = (async () => {
      const data = await answer;
      await previous?.done;
      await handle(sent, data);
    })();
    // (awaited below or by the next flush: a failure is not lost, nor unhandled meanwhile)
    done.catch(() => {});
    inFlight = { keys, done };
    // at most two requests out: this one, and the one before it, which is waited for here
    if (options.invite) await done;
    else await previous?.done;
  };

  const handle = async (sent: Pending[], data: Answer | ApiError) => {
    if (data instanceof ApiError) {
      for (const pending of sent) {
        failures.push({
          line: pending.line,
          ...(pending.userName && { userName: pending.userName }),
          problem: data.problem.code,
          message: data.problem.detail,
        });
      }
      return;
    }
    const byBulkId = new Map(sent.map((pending) => [`line${pending.line}`, pending]));
    const notCreated = new Set<number>();
    const taken: Pending[] = [];
    for (const result of data.Operations) {
      const invitation = String(result.bulkId).startsWith("invite-");
      const pending = byBulkId.get(String(result.bulkId).replace(/^invite-/, ""));
      if (!pending) continue;
      const who = { line: pending.line, ...(pending.userName && { userName: pending.userName }) };
      if (!invitation) {
        if (result.status === "201") counts.created++;
        else {
          notCreated.add(pending.line);
          const problem = problemOf(result);
          if (problem.problem === "conflict" && pending.userName && options.onConflict !== "fail") taken.push(pending);
          else failures.push({ ...who, ...problem });
        }
      } else if (result.status === "202") invited++;
      else if (!notCreated.has(pending.line)) {
        // (an invitation of a user that was not created fails too: its creation is the failure told)
        const problem = problemOf(result);
        failures.push({
          ...who,
          problem: problem.problem,
          message: `created, but not invited ('bizctl users invite' sends it): ${problem.message}`,
        });
      }
    }
    if (taken.length > 0) await (options.onConflict === "skip" ? skipTaken(taken) : mergeTaken(taken));
    // the mail goes out through the queue; pacing the batches keeps the average under the rate,
    // so that a large import does not flood the mail server
    if (options.invite) {
      const due = started + (invited * 1000) / rate;
      if (due > Date.now()) await sleep(due - Date.now());
    }
    progress.update(seen);
  };

  /** A line taken by another attribute (an externalId), not by the userName: no User to skip or update. */
  const takenByUserName = async (taken: Pending[]) => {
    const existing = await usersByName(
      client,
      taken.map((pending) => pending.userName as string),
    );
    return (pending: Pending) => {
      const user = existing.get(String(pending.userName).toLowerCase());
      if (!user) {
        failures.push({
          line: pending.line,
          ...(pending.userName && { userName: pending.userName }),
          problem: "conflict",
          message: "conflicts with an existing user of another user name",
        });
      }
      return user;
    };
  };

  /** --on-conflict skip: a line whose userName is taken is counted as skipped, the user left as it is. */
  const skipTaken = async (taken: Pending[]) => {
    const userOf = await takenByUserName(taken);
    for (const pending of taken) if (userOf(pending)) counts.skipped++;
  };

  /**
   * --on-conflict update: each line whose userName is taken is merged into that User: only the
   * attributes the file gives change (a PATCH under the version just read, in one more bulk
   * request); a User the line leaves as it is gets no write and counts as unchanged. Not
   * invited: an existing user has its own way in.
   */
  const mergeTaken = async (taken: Pending[]) => {
    const userOf = await takenByUserName(taken);
    const operations: Operation[] = [];
    const byBulkId = new Map<string, Pending>();
    for (const pending of taken) {
      const who = { line: pending.line, ...(pending.userName && { userName: pending.userName }) };
      const user = userOf(pending);
      const { passwordHash, resourceType: _, ...data } = (pending.operations[0]?.data ?? {}) as Attributes;
      if (!user) continue;
      if (passwordHash !== undefined) {
        failures.push({
          ...who,
          problem: "validation_failed",
          message: "exists, and an update never replaces a password: leave passwordHash out",
        });
        continue;
      }
      const changes = changesOf(user, data);
      if (changes.length === 0) {
        unchanged++;
        continue;
      }
      const bulkId = `update${pending.line}`;
      const version = versionOf(user);
      byBulkId.set(bulkId, pending);
      operations.push({
        method: "PATCH",
        path: `/Resources/${encodeURIComponent(String(user.id))}`,
        bulkId,
        ...(version && { version }),
        data: patchOf(changes),
      });
    }
    if (operations.length === 0) return;
    const { data } = await client.call(bulk.bulk, {
      body: { schemas: [bulk.BULK_URN.request], Operations: operations },
    });
    for (const result of data.Operations) {
      const pending = byBulkId.get(String(result.bulkId));
      if (!pending) continue;
      if (result.status === "200") counts.updated++;
      else
        failures.push({
          line: pending.line,
          ...(pending.userName && { userName: pending.userName }),
          ...problemOf(result),
        });
    }
  };

  const add = async (entry: UserLine) => {
    seen++;
    if ("error" in entry) {
      failures.push({
        line: entry.line,
        ...(entry.userName && { userName: entry.userName }),
        problem: "invalid_line",
        message: entry.error,
      });
      return;
    }
    const userName = typeof entry.user.userName === "string" ? entry.user.userName : undefined;
    // a user who brings a password hash has a password: an invitation is for a first one
    const invite = options.invite && entry.user.passwordHash === undefined;
    if (invite && !hasAddress(entry.user)) {
      // refused before the request: created without one, the user could never be invited
      failures.push({
        line: entry.line,
        ...(userName && { userName }),
        problem: "validation_failed",
        message: "has no e-mail address (emails[0].value) to send the invitation to; not imported",
      });
      return;
    }
    const bulkId = `line${entry.line}`;
    const operations: Operation[] = [
      { method: "POST", path: "/Resources", bulkId, data: { ...entry.user, resourceType: "User" } },
    ];
    if (invite) {
      operations.push({
        method: "POST",
        path: `/Resources/${bulk.BULK_ID_PREFIX}${bulkId}/invitation`,
        bulkId: `invite-${bulkId}`,
      });
    }
    const bytes = Buffer.byteLength(JSON.stringify(operations)) + 1;
    if (batchOperations + operations.length > perBatch || batchBytes + bytes > maxBytes) await flush();
    batch.push({ line: entry.line, ...(userName && { userName }), operations, bytes });
    batchOperations += operations.length;
    batchBytes += bytes;
  };

  // which column became what: on a terminal, or with --verbose; a script's stderr stays its errors
  const onHeader = (renamed: [string, string][]) => {
    if (renamed.length === 0 || !(ctx.io.stderr.isTTY || ctx.globals.verbose)) return;
    ctx.info(`Columns read as: ${renamed.map(([from, to]) => `${from} → ${to}`).join(", ")}.`);
  };
  const format = options.format as UsersFormat | undefined;
  try {
    for await (const entry of readUsers(ctx.io, file, { renames, format, onHeader })) {
      await add(entry);
    }
    await flush();
    await inFlight?.done;
  } catch (error) {
    progress.done();
    if (!(error instanceof ApiError) || error.status !== 401) throw error;
    // credentials refused (a token revoked or expired meanwhile): say what was done, no more
    await inFlight?.done.catch(() => {});
    const done = counts.created + counts.updated;
    throw new CliError(
      `${error.problem.detail} Stopped: ${done === 0 ? "nothing was imported" : `${counts.created} created and ${counts.updated} updated before that; the lines after them were not imported`}.`,
      EXIT.unauthenticated,
      error.problem.code,
    );
  }
  progress.done();
  // nothing to do is no mistake: `users export --filter … | users import -` must not fail a
  // script's run when the filter matched nothing (an empty file, a CSV header alone)
  if (seen === 0) ctx.info(`${file === "-" ? "stdin" : file} holds no users: nothing to import.`);
  // a user created but not invited is a failure of its line, and counted as created
  counts.failed = failures.length;
  await printImportSummary(ctx, {
    read: seen,
    counts,
    more: {
      ...(options.onConflict === "update" && { unchanged }),
      ...(options.invite && !options.dryRun && { invited }),
    },
    ...(options.dryRun && { dryRun: true }),
    failures,
    columns: ["line", "userName", "problem", "message"],
  });
  if (failures.length === 0) return;
  const others = options.dryRun
    ? "nothing was written (a dry run)"
    : counts.created + counts.updated === 0
      ? "nothing was imported"
      : "the others were imported";
  throw new CliError(
    `${failures.length} line(s) of ${file === "-" ? "stdin" : file} failed; ${others}.`,
    exitCodeOf(failures),
    "import_incomplete",
  );
}

export function register(group: Command, io: Context["io"]): void {
  group
    .command("import <file>")
    .description(
      "create the users of a CSV or NDJSON file ('-' for stdin) through POST /Bulk; prints a summary and the failures",
    )
    .addOption(
      new Option(
        "--on-conflict <policy>",
        "a userName that exists (or came earlier in the file): fail the line, skip it, or update that user",
      )
        .choices(ON_CONFLICT)
        .default("fail"),
    )
    .option("--map <old=new>", "read the column (or NDJSON member) OLD as NEW (repeatable)", collect)
    .option("--invite", "mail each new user an invitation whose link sets the first password")
    .option("--invite-rate <n>", `invitations queued per second at most (default ${DEFAULT_INVITE_RATE})`)
    .option("--batch-size <n>", `operations per POST /Bulk request (default ${DEFAULT_BATCH})`)
    .option("--format <format>", "csv or ndjson (default: from the extension, else from the first character)")
    .option("--dry-run", "read the file and the directory, print the summary the import would print; write nothing")
    .addHelpText(
      "after",
      `
Header convention (CSV): a column names an attribute path of the User schema:
  userName, displayName, title, active, externalId, employeeNumber, department, …
  name.givenName, name.familyName          a member of a complex attribute
  emails[0].value, emails[0].type          an element of a multi-valued attribute
  roles                                    admin, support or member; several as 'admin;support'
  urn:ietf:params:scim:schemas:extension:enterprise:2.0:User:department  (the prefix is dropped)
  passwordHash                             a bcrypt ($2a$/$2b$/$2y$) or argon2id (PHC) hash
Attribute names and common spellings are read in any case, with or without spaces, _ or -
(Department, Display Name, first_name): email (mail, e-mail, Email Address) as emails[0].value,
firstName (givenName) as name.givenName, lastName (familyName, surname) as name.familyName,
phone (mobile) as phoneNumbers[0].value, manager as manager.displayName, job title as title,
employee id as employeeNumber, role as roles, username as userName; on a terminal (or with
--verbose) stderr says which column became what. Two columns read as one attribute, or a column
mapped twice, are refused (exit 2). Without a user-name column, the e-mail is the userName.
--on-conflict update merges: only the attributes the file has columns for change; a user the
line leaves as it is gets no write, and counts as unchanged.
Empty cells are absent attributes; active and primary are true or false. A 'password' column is
refused: passwords in clear are never read from a file. A cell that starts with a quote (') loses
that one quote: 'users export -o csv' writes one before a value that starts with =, +, -, @, a
tab, a CR or a quote, so that no spreadsheet runs it as a formula, and reads back as exported.
NDJSON lines are User objects, as 'users export -o ndjson' writes them.
${examples(
  "bizctl users import <users-csv>",
  "bizctl users import <users-csv> --on-conflict skip",
  "bizctl users import <users-csv> --on-conflict update --dry-run",
  "bizctl users import <users-csv> --map mail=emails[0].value --map login=userName --invite",
  "bizctl users export -o ndjson | bizctl --profile <other> users import -",
)}`,
    )
    .action(withContext(io, importUsers));
}
