import type { Command } from "commander";
import type { Context } from "../../cli/command-context.js";
import * as create from "./create.js";
import * as del from "./delete.js";
import * as get from "./get.js";
import * as list from "./list.js";
import * as patch from "./patch.js";
import * as update from "./update.js";

export function register(program: Command, io: Context["io"]): void {
  const group = program
    .command("resources")
    .description("managed resources (SCIM): users, OAuth consumers, your own types");
  for (const verb of [list, get, create, update, patch, del]) verb.register(group, io);
}
