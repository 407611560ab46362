import type { Command } from "commander";
import type { Context } from "../../cli/command-context.js";
import { refuseBeforeAsking } from "../../cli/permissions.js";
import { listOfUser, revokeOfUser } from "../../contract/api-tokens.js";
import { API_TOKEN_COLUMNS, managingTokens, tokenNamed } from "../api-token-output.js";
import { examples, withContext } from "../verb-helpers.js";
import { resolveUser } from "./resolve.js";

async function listTokens(ctx: Context, reference: string): Promise<void> {
  ctx.requireCredential();
  const user = await resolveUser(ctx, reference);
  const call = (await ctx.client()).call(listOfUser, { params: { resourceId: user.id } });
  const { data } = await managingTokens(ctx, call);
  await ctx.printList(data.tokens, API_TOKEN_COLUMNS, `API tokens of ${user.userName}`);
}

async function revokeToken(ctx: Context, reference: string, tokenReference: string): Promise<void> {
  ctx.requireCredential();
  const user = await resolveUser(ctx, reference);
  if (!ctx.globals.yes) {
    await refuseBeforeAsking(ctx, "tokens:revoke-other", {}, { about: "users" });
  }
  const client = await ctx.client();
  const { data } = await managingTokens(ctx, client.call(listOfUser, { params: { resourceId: user.id } }));
  const token = tokenNamed(data.tokens, tokenReference, `${user.userName} has`);
  const label = `'${token.name}' (${token.id})`;
  await ctx.confirm(`Revoke API token ${label} of ${user.userName}? Scripts that use it stop working.`);
  const call = client.call(revokeOfUser, { params: { resourceId: user.id, tokenId: token.id } });
  await managingTokens(ctx, call);
  ctx.info(`Revoked API token ${label} of ${user.userName}; it is refused from now on.`);
}

export function register(group: Command, io: Context["io"]): void {
  group
    .command("tokens <user>")
    .description("a user's API tokens that are not revoked: name, scopes, created, expires, last used (admin)")
    .addHelpText("after", examples("bizctl users tokens <user>", "bizctl users tokens <e-mail> --json"))
    .action(withContext(io, listTokens));
  group
    .command("revoke-token <user> <token>")
    .description(
      "revoke one of a user's API tokens, by id or name (admin; asks first on a terminal, --yes without one)",
    )
    .addHelpText(
      "after",
      examples(
        "bizctl users revoke-token <user> <token-name> --yes",
        "bizctl users revoke-token <user> <token-id> --yes",
      ),
    )
    .action(withContext(io, revokeToken));
}
