import type { Command } from "commander";
import type { Context } from "../../cli/command-context.js";
import type { CallResult } from "../../client/client.js";
import { API_TOKEN_PREFIX } from "../../contract/api-tokens.js";
import * as auth from "../../contract/auth.js";
import { examples, withContext } from "../verb-helpers.js";

type IsLogged = CallResult<typeof auth.isLogged>["data"];

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
    ...credentialOf(credential.token, data.credential),
  });
}

/**
 * Whether it is a login's session or an API token, and which token: as the server tells it; a
 * server from before it told shows only the kind, by the token's prefix.
 */
function credentialOf(token: string, told: IsLogged["credential"]) {
  const type = told?.type ?? (token.startsWith(API_TOKEN_PREFIX) ? "api-token" : "session");
  return {
    credentialType: type,
    ...(told?.id && { tokenId: told.id }),
    ...(told?.name && { tokenName: told.name }),
    ...(told?.scopes && { scopes: told.scopes }),
  };
}

export function register(group: Command, io: Context["io"]): void {
  group
    .command("status")
    .description("show who you are logged in as, where, until when, and whether with a session or an API token")
    .addHelpText("after", examples("bizctl auth status", "bizctl auth status --json | jq -r .expiresAt"))
    .action(withContext(io, status));
}
