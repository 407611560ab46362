import type { Command } from "commander";
import { Context, type GlobalOptions } from "../cli/command-context.js";
import { CliError, saidBefore, UsageError } from "../cli/errors.js";
import { readStdin } from "../cli/io.js";
import { checkQuery } from "../cli/query.js";
import { ApiError } from "../client/errors.js";

export type Action<A extends unknown[]> = (ctx: Context, ...args: A) => Promise<void>;

/**
 * The contexts each run made, by the run's program (its root command), closed by run() whatever
 * happens: two runs in one process (tests) close their own.
 */
const openContexts = new WeakMap<Command, Context[]>();

/** Closes the contexts the run of `program` made. */
export async function closeContexts(program: Command): Promise<void> {
  const contexts = openContexts.get(program) ?? [];
  openContexts.delete(program);
  for (const ctx of contexts) await ctx.close().catch(() => {});
}

/**
 * Wraps a command action: builds the context from the global and local options and hands the
 * positional arguments and the local options to the run function.
 */
export function withContext<A extends unknown[]>(io: Context["io"], action: Action<A>) {
  return async (...args: unknown[]) => {
    const command = args.at(-1) as Command;
    const globals = command.optsWithGlobals() as GlobalOptions;
    const ctx = new Context(io, globals, groupOf(command));
    const program = rootOf(command);
    openContexts.set(program, [...(openContexts.get(program) ?? []), ctx]);
    try {
      await checkQuery(globals.query);
      await action(ctx, ...(args.slice(0, -1) as A));
    } catch (error) {
      throw saidBefore(ctx.explain(error), ctx.takeHeldMessages());
    }
    ctx.sayHeldMessages();
  };
}

/** The program a command belongs to: one per run. */
function rootOf(command: Command): Command {
  let root = command;
  while (root.parent) root = root.parent;
  return root;
}

/** The top-level command a command belongs to (`events` for `events list`). */
function groupOf(command: Command): string {
  let group = command;
  while (group.parent?.parent) group = group.parent;
  return group.name();
}

export function collect(value: string, previous: string[] = []): string[] {
  return [...previous, value];
}

export function examples(...lines: string[]): string {
  return `\nExamples:\n${lines.map((l) => `  $ ${l}`).join("\n")}\n`;
}

/** A person at a table: no data format, no --fields and no --query, which keep the record as the API answers it. */
export const forPerson = (ctx: Context): boolean =>
  ctx.format() === "table" && ctx.globals.query === undefined && ctx.fields() === undefined;

/** Register function of a command group. */
export type Register = (program: Command, io: Context["io"]) => void;

/**
 * Runs `attempt`; when it fails with `code` (a problem of the server's, or the CLI's own
 * not-found) and `tolerated` is set, runs `instead`: the `--if-not-exists` and
 * `--ignore-not-found` re-runs that succeed.
 */
export async function tolerating<T>(
  code: "conflict" | "not_found",
  tolerated: boolean | undefined,
  attempt: () => Promise<T>,
  instead: () => Promise<T>,
): Promise<T> {
  try {
    return await attempt();
  } catch (error) {
    const failed = error instanceof ApiError ? error.problem.code : error instanceof CliError ? error.code : undefined;
    if (tolerated && failed === code) return instead();
    throw error;
  }
}

/**
 * A numeric flag, checked before any call (a usage error, exit 2, that names the flag): the
 * server's answer would name a query parameter, which says nothing to someone who typed a flag,
 * and `--all` would have read pages before it. The range is the contract's where it has one.
 */
export function wholeNumber(value: string | undefined, flag: string, min: number, max: number): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!/^[0-9]{1,9}$/.test(value.trim()) || n < min || n > max) {
    throw new UsageError(`${flag} must be a whole number from ${min} to ${max}; got '${value}'.`);
  }
  return n;
}

/**
 * What a bulk verb acts on: `-` alone reads the ids or names from stdin, one a line (blank lines
 * skipped), so that a list pipes into it as into `xargs`; none there is nothing to do, no mistake
 * (`users list --filter … | users disable -` when nothing matched). Stdin taken, only --yes consents.
 */
export async function namesFrom(ctx: Context, references: string[], noun: string): Promise<string[]> {
  if (references.length !== 1 || references[0] !== "-") return references;
  const names = (await readStdin(ctx.io))
    .split(/\r?\n/)
    .map((line) => line.trim())
    .filter((line) => line !== "");
  if (names.length === 0) ctx.info(`stdin names no ${noun}: nothing to do.`);
  return names;
}
