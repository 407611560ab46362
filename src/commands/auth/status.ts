import type { Command } from "commander";
import type { Context } from "../../cli/command-context.js";
import * as auth from "../../contract/auth.js";
import { examples, withContext } from "../verb-helpers.js";

async function status(ctx: Context): Promise<void> {
  const credential = ctx.requireCredential();
  const client = await ctx.client();
  const { data } = await client.call(auth.isLogged);
  await ctx.print({
    profile: ctx.profileName,
    server: client.transport.description,
    credentialSource: credential.source,
    configFile: ctx.profiles.file,
    configFileMode: ctx.profiles.fileMode() ?? null,
    user: data.user.userName,
    userId: data.user.id,
    roles: data.user.roles,
    expiresAt: data.expiresAt,
  });
}

export function register(group: Command, io: Context["io"]): void {
  group
    .command("status")
    .description("show who you are logged in as, where, and until when")
    .addHelpText("after", examples("bizctl auth status", "bizctl auth status --json | jq -r .expiresAt"))
    .action(withContext(io, status));
}
