import type { Command } from "commander";
import type { Context } from "../../../cli/command-context.js";
import * as create from "./create.js";
import * as del from "./delete.js";
import * as get from "./get.js";
import * as list from "./list.js";

export function register(group: Command, io: Context["io"]): void {
  const consumers = group.command("consumers").description("the applications that may ask users for access");
  for (const verb of [create, list, get, del]) verb.register(consumers, io);
}
