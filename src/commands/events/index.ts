import type { Command } from "commander";
import type { Context } from "../../cli/command-context.js";
import * as create from "./create.js";
import * as del from "./delete.js";
import * as exportEvents from "./export.js";
import * as get from "./get.js";
import * as importEvents from "./import.js";
import * as list from "./list.js";
import * as update from "./update.js";

export function register(program: Command, io: Context["io"]): void {
  const group = program.command("events").description("the CRM event registry");
  for (const verb of [list, get, create, update, del, importEvents, exportEvents]) verb.register(group, io);
}
