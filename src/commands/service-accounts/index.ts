import type { Command } from "commander";
import type { Context } from "../../cli/command-context.js";
import { CliError, EXIT, UsageError } from "../../cli/errors.js";
import { refuseBeforeAsking } from "../../cli/permissions.js";
import { listOfUser, revokeOfUser } from "../../contract/api-tokens.js";
import { ROLES, type Role } from "../../contract/route.js";
import { create as createAccount, createToken, list as listAccounts } from "../../contract/service-accounts.js";
import { API_TOKEN_COLUMNS, expiryDays, forPerson, scopesOf, tokenNamed } from "../api-token-output.js";
import { collect, examples, withContext } from "../verb-helpers.js";

// Service accounts (spec 1.9): Users that are not people, acting only through API tokens an
// admin makes for them. Every verb is an admin's: support is refused before it is asked anything.

const COLUMNS = ["userName", "roles", "active", "created", "id"];

const mayManage = (ctx: Context) =>
  refuseBeforeAsking(ctx, "service-accounts:manage", {}, { about: "service accounts" });

function rolesOf(given: string[] | undefined): Role[] {
  const roles = given ?? [];
  const unknown = roles.filter((role) => !(ROLES as readonly string[]).includes(role));
  if (roles.length === 0 || unknown.length > 0) {
    throw new UsageError(
      roles.length === 0 ? "--role is required." : `Unknown role ${unknown.map((r) => `'${r}'`).join(", ")}.`,
      `roles: ${ROLES.join(", ")} (--role once for each)`,
    );
  }
  return [...new Set(roles)] as Role[];
}

/** The service account of this name (or id), among those the server lists. */
async function named(ctx: Context, reference: string) {
  const { data } = await (await ctx.client()).call(listAccounts);
  const key = reference.toLowerCase();
  const found = data.serviceAccounts.find((one) => one.id === reference || one.userName.toLowerCase() === key);
  if (!found) {
    throw new CliError(
      `No service account named '${reference}'.`,
      EXIT.notFound,
      "not_found",
      "bizctl service-accounts list",
    );
  }
  return found;
}

async function create(ctx: Context, name: string, options: { role?: string[]; scope?: string[] }) {
  const roles = rolesOf(options.role);
  const scopes = scopesOf(options.scope);
  ctx.requireCredential();
  await mayManage(ctx);
  const client = await ctx.client();
  const { data } = await client.call(createAccount, { body: { userName: name, roles } });
  if (!scopes) {
    await ctx.print(data, COLUMNS);
    return;
  }
  // --scope: its first token, with those scopes, made at once (printed once)
  const token = await client.call(createToken, { params: { id: data.id }, body: { name, scopes } });
  await printToken(ctx, token.data, data.userName);
}

async function printToken(
  ctx: Context,
  data: { token: string; id: string; name: string; scopes: string[]; expiresAt: string },
  owner: string,
) {
  if (!forPerson(ctx)) {
    await ctx.print(data);
    return;
  }
  ctx.info(
    `API token '${data.name}' of ${owner} created (id ${data.id}; ${data.scopes.join(", ")}; expires ${data.expiresAt}).`,
  );
  ctx.info("Copy it now: it is shown this once, and the server keeps only its hash.");
  ctx.printText(`${data.token}\n`);
}

async function list(ctx: Context) {
  ctx.requireCredential();
  await mayManage(ctx);
  const { data } = await (await ctx.client()).call(listAccounts);
  await ctx.printList(data.serviceAccounts, COLUMNS, "service accounts");
}

async function tokens(ctx: Context, name: string) {
  ctx.requireCredential();
  await mayManage(ctx);
  const account = await named(ctx, name);
  const { data } = await (await ctx.client()).call(listOfUser, { params: { resourceId: account.id } });
  await ctx.printList(data.tokens, API_TOKEN_COLUMNS, `API tokens of ${account.userName}`);
}

async function tokenCreate(ctx: Context, name: string, options: { name?: string; scope?: string[]; expires?: string }) {
  const expiresInDays = expiryDays(options.expires);
  const scopes = scopesOf(options.scope);
  ctx.requireCredential();
  await mayManage(ctx);
  const account = await named(ctx, name);
  const body = {
    name: options.name ?? account.userName,
    ...(expiresInDays && { expiresInDays }),
    ...(scopes && { scopes }),
  };
  const { data } = await (await ctx.client()).call(createToken, { params: { id: account.id }, body });
  await printToken(ctx, data, account.userName);
}

async function tokenRevoke(ctx: Context, name: string, tokenReference: string) {
  ctx.requireCredential();
  await mayManage(ctx);
  const account = await named(ctx, name);
  const client = await ctx.client();
  const { data } = await client.call(listOfUser, { params: { resourceId: account.id } });
  const token = tokenNamed(data.tokens, tokenReference, `${account.userName} has`);
  const label = `'${token.name}' (${token.id})`;
  await ctx.confirm(`Revoke API token ${label} of ${account.userName}? What uses it stops working.`);
  await client.call(revokeOfUser, { params: { resourceId: account.id, tokenId: token.id } });
  ctx.info(`Revoked API token ${label} of ${account.userName}; it is refused from now on.`);
}

export function register(program: Command, io: Context["io"]): void {
  const group = program
    .command("service-accounts")
    .description("accounts that are not people (no password, no login): they act only through API tokens (admin)");
  group
    .command("create <name>")
    .description("create a service account; with --scope, also its first API token (printed once)")
    .option("--role <role>", `its role (repeatable): ${ROLES.join(", ")}`, collect)
    .option("--scope <scope>", "make its first token now, limited to this scope (repeatable)", collect)
    .addHelpText(
      "after",
      examples(
        "bizctl service-accounts create entra-provisioning --role admin",
        "bizctl service-accounts create entra-provisioning --role admin --scope resources:read --scope resources:write",
      ),
    )
    .action(withContext(io, create));
  group
    .command("list")
    .description("the service accounts: name, roles, active, created")
    .addHelpText("after", examples("bizctl service-accounts list", "bizctl service-accounts list --json"))
    .action(withContext(io, list));
  group
    .command("tokens <name>")
    .description("a service account's API tokens that are not revoked")
    .addHelpText("after", examples("bizctl service-accounts tokens okta-provisioning"))
    .action(withContext(io, tokens));
  group
    .command("token-create <name>")
    .description("create an API token of a service account; it is printed once")
    .option("--name <name>", "what the token is for (default: the account's name)")
    .option("--scope <scope>", "limit the token to this scope (repeatable); none: all of them", collect)
    .option("--expires <days>", "expiry in days, e.g. 30d (default 90d, at most 366d)")
    .addHelpText(
      "after",
      examples("bizctl service-accounts token-create okta-provisioning --name 'Entra ID' --scope resources:write"),
    )
    .action(withContext(io, tokenCreate));
  group
    .command("token-revoke <name> <token>")
    .description(
      "revoke an API token of a service account, by its id or its name (asks first on a terminal; --yes without one)",
    )
    .addHelpText(
      "after",
      examples(
        "bizctl service-accounts token-revoke okta-provisioning Okta --yes",
        "bizctl service-accounts token-revoke entra-provisioning <token-id> --yes",
      ),
    )
    .action(withContext(io, tokenRevoke));
}
