import type { Command } from "commander";
import type { Context } from "../../cli/command-context.js";
import { UsageError } from "../../cli/errors.js";
import {
  API_TOKEN_DEFAULT_DAYS,
  API_TOKEN_MAX_DAYS,
  createOwn,
  listOwn,
  revokeOwn,
} from "../../contract/api-tokens.js";
import { API_TOKEN_SCOPES, type ApiTokenScope } from "../../contract/route.js";
import { API_TOKEN_COLUMNS, managingTokens, tokenNamed } from "../api-token-output.js";
import { collect, examples, withContext } from "../verb-helpers.js";

interface CreateOptions {
  name: string;
  scope?: string[];
  expires?: string;
}

/**
 * `--expires 30d`: whole days only, as the server counts them, from 1 to 366. Any other unit, or
 * a longer expiry, exits 2 before a request: the server would refuse it as a body field the
 * person never typed.
 */
export function expiryDays(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const match = /^([0-9]{1,4})d$/.exec(value.trim());
  const days = match ? Number(match[1]) : Number.NaN;
  if (!(days >= 1 && days <= API_TOKEN_MAX_DAYS)) {
    throw new UsageError(
      `--expires takes a number of days from 1 to ${API_TOKEN_MAX_DAYS} followed by d (30d, 90d, 366d); got '${value}'.`,
      `leave it out for ${API_TOKEN_DEFAULT_DAYS} days`,
    );
  }
  return days;
}

/** The scopes named with `--scope`, checked here so that a typo says which names there are (exit 2). */
function scopesOf(given: string[] | undefined): ApiTokenScope[] | undefined {
  if (!given?.length) return undefined;
  const known = API_TOKEN_SCOPES as readonly string[];
  const unknown = given.filter((scope) => !known.includes(scope));
  if (unknown.length) {
    throw new UsageError(
      `Unknown scope${unknown.length > 1 ? "s" : ""} ${unknown.map((s) => `'${s}'`).join(", ")}.`,
      `scopes: ${API_TOKEN_SCOPES.join(", ")} (--scope once for each; none gives them all)`,
    );
  }
  return [...new Set(given)] as ApiTokenScope[];
}

/** A person at a terminal gets the token alone on stdout; a script or --json, the created record. */
const forPerson = (ctx: Context) => Boolean(ctx.io.stdout.isTTY) && !ctx.globals.json && !ctx.globals.output;

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
