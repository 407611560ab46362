import type { Command } from "commander";
import { Context, type GlobalOptions } from "../cli/context.js";

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
    const ctx = new Context(io, command.optsWithGlobals() as GlobalOptions);
    openContexts.push(ctx);
    await action(ctx, ...(args.slice(0, -1) as A));
  };
}

export function collect(value: string, previous: string[] = []): string[] {
  return [...previous, value];
}

export function examples(...lines: string[]): string {
  return `\nExamples:\n${lines.map((l) => `  $ ${l}`).join("\n")}\n`;
}

/** Register function of a command group. */
export type Register = (program: Command, io: Context["io"]) => void;
