import type { Command } from "commander";
import type { Context } from "../../cli/command-context.js";
import { examples, withContext } from "../verb-helpers.js";
import { actOnFilter, checkSelection, DISABLE, type FilterOptions } from "./by-filter.js";
import { setActive } from "./set-active.js";

export function register(group: Command, io: Context["io"]): void {
  group
    .command("disable [user]")
    .description("set active=false: logins refused, sessions ended; or for every user --filter selects, in bulk")
    .option("--filter <expr>", "disable every user this SCIM filter selects, through POST /Bulk (asks first)")
    .option("--dry-run", "with --filter: print how many users it selects and the first ids; change nothing")
    .addHelpText(
      "after",
      examples("bizctl users disable <user>", "bizctl users disable --filter 'department eq \"Contractors\"' --yes"),
    )
    .action(
      withContext(io, async (ctx, reference: string | undefined, options: FilterOptions) => {
        if (checkSelection(reference === undefined ? [] : [reference], options, "disable")) {
          return actOnFilter(ctx, options.filter as string, options, DISABLE);
        }
        return setActive(ctx, reference as string, false);
      }),
    );
}
