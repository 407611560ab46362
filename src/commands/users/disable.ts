import type { Command } from "commander";
import type { Context } from "../../cli/command-context.js";
import { registerSetActive } from "./set-active.js";

export function register(group: Command, io: Context["io"]): void {
  registerSetActive(group, io, false);
}
