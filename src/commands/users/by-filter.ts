/**
 * `users delete|disable|enable --filter EXPR`: act on every user a filter
 * selects, through POST /Bulk a batch at a time (not a request a user), after a count and a
 * confirmation (`--yes` without a terminal); `--dry-run` shows the count and the first ids.
 */
import type { Context } from "../../cli/command-context.js";
import { CliError, EXIT, exitCodeFor, UsageError } from "../../cli/errors.js";
import { refuseBeforeAsking } from "../../cli/permissions.js";
import { ApiError } from "../../client/errors.js";
import * as bulk from "../../contract/bulk.js";
import {
  isPrivileged,
  type OperationId,
  type Target as PolicyTarget,
  type Words,
} from "../../contract/policy/index.js";
import { SCIM_URN } from "../../contract/scim.js";
import { serviceProviderConfig } from "../../contract/scim-discovery.js";
import { listResources } from "../resource-calls.js";
import { rolesOf } from "./resolve.js";

/** How many ids a dry run and a confirmation name. */
const FIRST_SHOWN = 10;

export interface FilterOptions {
  filter?: string;
  dryRun?: boolean;
}

interface Target {
  id: string;
  userName: string;
  version?: string;
  /** what the access policy asks of a target: one who holds admin or support needs an admin */
  roles: string[];
}

/** What the access policy is asked about these users, as refuseBeforeAsking() takes it. */
interface Permitted {
  operation: OperationId;
  target: PolicyTarget;
  words: Words & { about: string };
}

interface Action {
  /** "delete", "disable": the verb, in the messages and the summary's member */
  verb: string;
  /** the past tense: "deleted" */
  done: string;
  /** the bulk operation that acts on one user */
  operation: (user: Target) => { method: string; path: string; version?: string; data?: unknown };
  /** the HTTP status of an operation that succeeded */
  ok: string;
  /** the server's rule, checked before the question so that nobody answers it only to be refused */
  permitted: (users: Target[]) => Permitted;
}

export const DELETE: Action = {
  verb: "delete",
  done: "deleted",
  ok: "204",
  permitted: () => ({ operation: "users:delete", target: {}, words: { about: "users" } }),
  operation: (user) => ({
    method: "DELETE",
    path: `/Resources/${encodeURIComponent(user.id)}`,
    ...(user.version && { version: user.version }),
  }),
};

/** `disable` and its undoing `enable`: the same PATCH of `active`, under the same rule. */
const settingActive = (active: boolean): Action => {
  const verb = active ? "enable" : "disable";
  return {
    verb,
    done: `${verb}d`,
    ok: "200",
    permitted: (users) => {
      // the most guarded of them decides: one privileged account is enough to need an admin
      const privileged = users.filter((user) => isPrivileged(user.roles));
      if (privileged.length === 0)
        return { operation: "users:set-active", target: {}, words: { verb, about: "users" } };
      const target = { roles: [...new Set(privileged.flatMap((user) => user.roles))] };
      const words = { verb, about: named(privileged), count: privileged.length };
      return { operation: "users:set-active", target, words };
    },
    operation: (user) => ({
      method: "PATCH",
      path: `/Resources/${encodeURIComponent(user.id)}`,
      ...(user.version && { version: user.version }),
      data: { schemas: [SCIM_URN.patchOp], Operations: [{ op: "replace", path: "active", value: active }] },
    }),
  };
};

export const DISABLE = settingActive(false);
export const ENABLE = settingActive(true);

/** Refuses users named and --filter together, and neither; --dry-run without --filter; an empty --filter. */
export function checkSelection(references: string[], options: FilterOptions, verb: string): boolean {
  if (options.filter !== undefined && references.length > 0) {
    throw new UsageError(`Name the users to ${verb}, or give --filter; not both.`);
  }
  if (options.filter === undefined && references.length === 0) {
    throw new UsageError(`Name the users to ${verb}, or select them with --filter EXPR.`);
  }
  if (options.dryRun && options.filter === undefined) throw new UsageError("--dry-run goes with --filter.");
  // `--filter "$FILTER"` with FILTER unset: the server reads no filter as every user
  if (options.filter?.trim() === "") {
    throw new UsageError(
      "--filter is empty, which would select every user; give the expression (every user: --filter 'userName pr').",
    );
  }
  return options.filter !== undefined;
}

const named = (users: Target[]) =>
  `${users
    .slice(0, FIRST_SHOWN)
    .map((u) => `${u.userName} (${u.id})`)
    .join(", ")}${users.length > FIRST_SHOWN ? `, and ${users.length - FIRST_SHOWN} more` : ""}`;

/** Every user the filter selects, acted on in bulk batches; prints `{matched, <done>, failed, failures}`. */
export async function actOnFilter(ctx: Context, filter: string, options: FilterOptions, action: Action): Promise<void> {
  ctx.requireCredential();
  const rows = await listResources(ctx, { type: "User", filter, all: true, progress: false });
  const users: Target[] = rows.map((row) => {
    const version = (row.meta as { version?: string } | undefined)?.version;
    return {
      id: String(row.id),
      userName: String(row.userName),
      roles: rolesOf(row),
      ...(version && { version }),
    };
  });
  if (users.length === 0) {
    ctx.info(`No user matches ${JSON.stringify(filter)}; nothing to ${action.verb}.`);
    await ctx.print({ matched: 0, [action.done]: 0, failed: 0, failures: [] });
    return;
  }
  // a dry run too: it would say what the server then refuses; with --yes the server's answer is the check
  let self = "";
  if (options.dryRun || !ctx.globals.yes) {
    const { operation, target, words } = action.permitted(users);
    const me = await refuseBeforeAsking(ctx, operation, target, words);
    // the question names ten users: one's own account may be past them
    if (action === DISABLE && users.some((user) => user.id === me.id)) {
      self =
        ", your own account among them (your sessions end at once, and you cannot log in until another admin enables it)";
    }
  }
  if (options.dryRun) {
    ctx.info(`Dry run (nothing written): would ${action.verb} ${users.length} user(s): ${named(users)}${self}.`);
    await ctx.print({
      dryRun: true,
      matched: users.length,
      first: users.slice(0, FIRST_SHOWN).map(({ id, userName }) => ({ id, userName })),
    });
    return;
  }
  await ctx.confirm(
    `${action.verb[0]?.toUpperCase()}${action.verb.slice(1)} ${users.length} user(s) matching ${JSON.stringify(filter)}: ${named(users)}${self}?`,
  );
  const client = await ctx.client();
  const { data: config } = await client.call(serviceProviderConfig, {});
  const perRequest = Math.max(1, Math.min(config.bulk.maxOperations, bulk.BULK_MAX_OPERATIONS));
  const failures: { id: string; userName: string; problem: string; message: string }[] = [];
  let done = 0;
  for (let at = 0; at < users.length; at += perRequest) {
    const batch = users.slice(at, at + perRequest);
    const byBulkId = new Map(batch.map((user, index) => [`u${at + index}`, user]));
    const { data } = await client.call(bulk.bulk, {
      body: {
        schemas: [bulk.BULK_URN.request],
        Operations: [...byBulkId].map(([bulkId, user]) => ({ ...action.operation(user), bulkId })),
      },
    });
    for (const result of data.Operations) {
      const user = byBulkId.get(String(result.bulkId));
      if (!user) continue;
      if (result.status === action.ok) done++;
      else {
        const response = (result.response ?? {}) as { code?: string; detail?: string };
        failures.push({
          id: user.id,
          userName: user.userName,
          problem: response.code ?? `http_${result.status}`,
          message: response.detail ?? `status ${result.status}`,
        });
      }
    }
  }
  ctx.info(
    `${action.done[0]?.toUpperCase()}${action.done.slice(1)} ${done} of ${users.length} user(s)${failures.length ? `; ${failures.length} failed` : ""}.`,
  );
  await ctx.print({ matched: users.length, [action.done]: done, failed: failures.length, failures });
  if (failures.length === 0) return;
  throw new CliError(
    `${failures.length} of ${users.length} user(s) could not be ${action.done}.`,
    exitOf(failures[0]?.problem),
    `${action.verb}_incomplete`,
  );
}

/** The exit code of the first failure's problem (6 for a last admin kept, 5 forbidden…). */
function exitOf(problem: string | undefined): number {
  const code = exitCodeFor(new ApiError(400, { type: "", title: "", status: 400, detail: "", code: problem ?? "" }));
  return code === EXIT.ok ? EXIT.failure : code;
}
