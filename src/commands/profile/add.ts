import { resolve } from "node:path";
import type { Command } from "commander";
import type { Context } from "../../cli/command-context.js";
import { checkServer } from "../../cli/compose.js";
import { UsageError } from "../../cli/errors.js";
import { examples, withContext } from "../verb-helpers.js";

const NAME = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/;

export function register(group: Command, io: Context["io"]): void {
  group
    .command("add <name>")
    .description("add or change a profile; --server (a global option) names its server")
    .usage("<name> --server <url|embedded> [--data-dir <dir>] [--use]")
    .option("--data-dir <dir>", "data dir of an embedded profile")
    .option("--use", "make it the current profile")
    .addHelpText(
      "after",
      examples(
        "bizctl profile add prod --server https://api.example.com",
        "bizctl profile add lab --server embedded --data-dir ./lab",
      ),
    )
    .action(
      withContext(io, async (ctx, name: string, options: { dataDir?: string; use?: boolean }) => {
        if (!NAME.test(name)) throw new UsageError(`'${name}' is not a valid profile name (letters, digits, . _ -).`);
        const server = ctx.globals.server;
        if (!server)
          throw new UsageError("A profile needs a server.", "pass --server http(s)://host[:port] or --server embedded");
        checkServer(server, "--server");
        // a relative data dir means the one under the current directory, wherever bizctl runs later
        await ctx.profiles.save(name, { server, ...(options.dataDir && { dataDir: resolve(options.dataDir) }) });
        if (options.use) await ctx.profiles.use(name);
        ctx.info(`Profile '${name}' → ${server}${options.use ? " (current)" : ""}.`);
      }),
    );
}
