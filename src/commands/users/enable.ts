import type { Command } from "commander";
import type { Context } from "../../cli/command-context.js";
import { examples, withContext } from "../verb-helpers.js";
import { setActive } from "./set-active.js";

export function register(group: Command, io: Context["io"]): void {
  group
    .command("enable <user>")
    .description("set active=true again")
    .addHelpText("after", examples("bizctl users enable <user>"))
    .action(withContext(io, async (ctx, reference: string) => setActive(ctx, reference, true)));
}
