import type { Command } from "commander";
import type { Context } from "../../cli/command-context.js";
import * as list from "./list.js";
import * as tail from "./tail.js";

export function register(program: Command, io: Context["io"]): void {
  const group = program.command("audit").description("the audit trail: who did what, to whom, when, from where");
  for (const verb of [list, tail]) verb.register(group, io);
}
