import type { Command } from "commander";
import type { Context } from "../../cli/command-context.js";
import * as explain from "./explain.js";

export function register(program: Command, io: Context["io"]): void {
  const group = program.command("access").description("who may do what, and why: the server's access policy");
  for (const verb of [explain]) verb.register(group, io);
}
