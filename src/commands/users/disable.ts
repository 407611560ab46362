import type { Command } from "commander";
import type { Context } from "../../cli/command-context.js";
import { examples, withContext } from "../verb-helpers.js";
import { setActive } from "./set-active.js";

export function register(group: Command, io: Context["io"]): void {
  group
    .command("disable <user>")
    .description("set active=false: logins refused, sessions ended")
    .addHelpText("after", examples("bizctl users disable <user>"))
    .action(withContext(io, async (ctx, reference: string) => setActive(ctx, reference, false)));
}
