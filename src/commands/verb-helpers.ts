import type { Command } from "commander";
import { Context, type GlobalOptions } from "../cli/command-context.js";
import { CliError, UsageError } from "../cli/errors.js";
import { checkQuery } from "../cli/query.js";
import { ApiError } from "../client/errors.js";

export type Action<A extends unknown[]> = (ctx: Context, ...args: A) => Promise<void>;

/** Contexts made for this run, closed by run() whatever happens. */
export const openContexts: Context[] = [];

/**
 * Wraps a command action: builds the context from the global and local options and hands the
 * positional arguments and the local options to the run function.
 */
export function withContext<A extends unknown[]>(io: Context["io"], action: Action<A>) {
  return async (...args: unknown[]) => {
    const command = args.at(-1) as Command;
    const globals = command.optsWithGlobals() as GlobalOptions;
    const ctx = new Context(io, globals, groupOf(command));
    openContexts.push(ctx);
    try {
      await checkQuery(globals.query);
      await action(ctx, ...(args.slice(0, -1) as A));
    } catch (error) {
      throw ctx.explain(error);
    }
  };
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
 * A numeric flag, checked before any call: the server's answer to `abc` would quote the pattern
 * of its query schema, which says nothing to someone who typed a flag.
 */
export function wholeNumber(value: string | undefined, flag: string, min: number, max: number): string | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!/^[0-9]{1,9}$/.test(value.trim()) || n < min || n > max) {
    throw new UsageError(`${flag} must be a whole number from ${min} to ${max}; got '${value}'.`);
  }
  return String(n);
}
