import type { Command } from "commander";
import type { Context } from "../../cli/command-context.js";
import * as add from "./add.js";
import * as list from "./list.js";
import * as remove from "./remove.js";
import * as show from "./show.js";
import * as use from "./use.js";

export function register(program: Command, io: Context["io"]): void {
  const group = program.command("profile").description("named servers and their stored credentials");
  for (const verb of [list, add, use, show, remove]) verb.register(group, io);
}
