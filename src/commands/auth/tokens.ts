import type { Command } from "commander";
import type { Context } from "../../cli/command-context.js";
import {
  API_TOKEN_DEFAULT_DAYS,
  API_TOKEN_MAX_DAYS,
  createOwn,
  listOwn,
  revokeOwn,
} from "../../contract/api-tokens.js";
import { API_TOKEN_SCOPES } from "../../contract/route.js";
import { API_TOKEN_COLUMNS, expiryDays, forPerson, managingTokens, scopesOf, tokenNamed } from "../api-token-output.js";
import { collect, examples, withContext } from "../verb-helpers.js";

interface CreateOptions {
  name: string;
  scope?: string[];
  expires?: string;
}

async function create(ctx: Context, options: CreateOptions): Promise<void> {
  const expiresInDays = expiryDays(options.expires);
  const scopes = scopesOf(options.scope);
  ctx.requireCredential();
  const body = { name: options.name, ...(expiresInDays && { expiresInDays }), ...(scopes && { scopes }) };
  const { data } = await managingTokens(ctx, (await ctx.client()).call(createOwn, { body }));
  if (!forPerson(ctx)) {
    await ctx.print(data);
    return;
  }
  ctx.info(`API token '${data.name}' created (id ${data.id}; ${data.scopes.join(", ")}; expires ${data.expiresAt}).`);
  ctx.info("Copy it now: it is shown this once, and the server keeps only its hash.");
  ctx.printText(`${data.token}\n`);
}

async function list(ctx: Context): Promise<void> {
  ctx.requireCredential();
  const { data } = await managingTokens(ctx, (await ctx.client()).call(listOwn));
  await ctx.printList(data.tokens, API_TOKEN_COLUMNS, "API tokens");
}

async function revoke(ctx: Context, reference: string): Promise<void> {
  ctx.requireCredential();
  const { data } = await managingTokens(ctx, (await ctx.client()).call(listOwn));
  const token = tokenNamed(data.tokens, reference, "You have");
  const label = `'${token.name}' (${token.id})`;
  await ctx.confirm(`Revoke API token ${label}? Scripts that use it stop working.`);
  await managingTokens(ctx, (await ctx.client()).call(revokeOwn, { params: { id: token.id } }));
  ctx.info(`Revoked API token ${label}; it is refused from now on.`);
}

export function register(parent: Command, io: Context["io"]): void {
  const group = parent
    .command("tokens")
    .description("your API tokens for scripts: create (shown once), list, revoke; needs your own login");
  group
    .command("create")
    .description("create an API token; it is printed once (on a terminal alone on stdout, else in the JSON record)")
    .requiredOption("--name <name>", "what the token is for, shown in the list")
    .option(
      "--scope <scope>",
      `limit the token to this scope (repeatable): ${API_TOKEN_SCOPES.join(", ")}; none: all of them`,
      collect,
    )
    .option(
      "--expires <days>",
      `expiry in days, e.g. 30d (default ${API_TOKEN_DEFAULT_DAYS}d, at most ${API_TOKEN_MAX_DAYS}d)`,
    )
    .addHelpText(
      "after",
      examples(
        "bizctl auth tokens create --name 'nightly export' --scope events:read --expires 30d",
        "bizctl auth tokens create --name ci --json | jq -r .token",
        "BIZCTL_TOKEN=$(bizctl auth tokens create --name report --scope events:read --json | jq -r .token) bizctl events list",
      ),
    )
    .action(withContext(io, create));
  group
    .command("list")
    .description("your API tokens that are not revoked: name, scopes, created, expires, last used and from where")
    .addHelpText("after", examples("bizctl auth tokens list", "bizctl auth tokens list --json"))
    .action(withContext(io, list));
  group
    .command("revoke <token>")
    .description("revoke one of your API tokens, by id or name (asks first on a terminal; --yes without one)")
    .addHelpText(
      "after",
      examples("bizctl auth tokens revoke <token-name> --yes", "bizctl auth tokens revoke <token-id> --yes"),
    )
    .action(withContext(io, revoke));
}
