import { resolve } from "node:path";
import type { Command } from "commander";
import { checkServer } from "../../cli/compose.js";
import type { Context } from "../../cli/context.js";
import { UsageError } from "../../cli/errors.js";
import { DEFAULT_PROFILE, EMBEDDED, type Profile } from "../../config/profiles.js";
import { examples, withContext } from "../shared.js";

const NAME = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/;

function describe(name: string, profile: Profile, current: string) {
  return {
    name,
    current: name === current,
    server: profile.server,
    ...(profile.server === EMBEDDED && profile.dataDir && { dataDir: profile.dataDir }),
    user: profile.auth?.user.userName ?? null,
    expiresAt: profile.auth?.expiresAt ?? null,
  };
}

export function register(program: Command, io: Context["io"]): void {
  const group = program.command("profile").description("named servers and their stored credentials");
  group
    .command("list")
    .description("list profiles")
    .action(
      withContext(io, async (ctx) => {
        const current = ctx.profileName;
        await ctx.print(Object.entries(ctx.profiles.all()).map(([name, p]) => describe(name, p, current)));
      }),
    );
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
  group
    .command("use <name>")
    .description("make a profile the current one")
    .action(
      withContext(io, async (ctx, name: string) => {
        if (!ctx.profiles.get(name)) throw new UsageError(`No profile named '${name}'.`, "see 'bizctl profile list'");
        await ctx.profiles.use(name);
        ctx.info(`Now using profile '${name}'.`);
      }),
    );
  group
    .command("show [name]")
    .description("show a profile (the selected one by default)")
    .action(
      withContext(io, async (ctx, name: string | undefined) => {
        const chosen = name ?? ctx.profileName;
        const profile = ctx.profiles.get(chosen);
        if (!profile) throw new UsageError(`No profile named '${chosen}'.`, "see 'bizctl profile list'");
        await ctx.print({ ...describe(chosen, profile, ctx.profileName), configFile: ctx.profiles.file });
      }),
    );
  group
    .command("remove <name>")
    .description("remove a profile and its stored token")
    .action(
      withContext(io, async (ctx, name: string) => {
        if (name === DEFAULT_PROFILE) throw new UsageError("The default profile cannot be removed.");
        if (!ctx.profiles.get(name)) throw new UsageError(`No profile named '${name}'.`, "see 'bizctl profile list'");
        await ctx.profiles.remove(name);
        ctx.info(`Removed profile '${name}'.`);
      }),
    );
}
