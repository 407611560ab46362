import type { Command } from "commander";
import type { Context } from "../../cli/command-context.js";
import { UsageError } from "../../cli/errors.js";
import { printRawResponse, readDataOption } from "../../cli/raw-call.js";
import { examples, withContext } from "../verb-helpers.js";
import { oauthSigner, SIGNING_OPTIONS, storedOAuth, storedSigning } from "./signing.js";

const METHODS = ["GET", "POST", "PUT", "DELETE"];

async function call(
  ctx: Context,
  method: string,
  path: string,
  options: { data?: string; signatureMethod?: string; privateKeyFile?: string },
): Promise<void> {
  const verb = method.toUpperCase();
  if (!METHODS.includes(verb)) throw new UsageError(`Unknown method '${method}'; use ${METHODS.join(", ")}.`);
  if (!path.startsWith("/")) throw new UsageError("PATH must start with '/', e.g. /api/crm/v1/events.");
  const stored = storedOAuth(ctx);
  const body = await readDataOption(ctx, options.data);
  const authorize = await oauthSigner(ctx, {
    consumer: { key: stored.consumerKey, secret: stored.consumerSecret },
    token: { key: stored.token, secret: stored.tokenSecret },
    method: verb,
    path,
    ...(await storedSigning(stored, options)),
  });
  // a retried GET, PUT or DELETE is signed again: the server accepts each nonce once
  const response = await (await ctx.client()).raw(verb, path, body, {}, authorize);
  await printRawResponse(ctx, response);
}

export function register(group: Command, io: Context["io"]): void {
  group
    .command("call <method> <path>")
    .description("call any API path signed with the stored token credentials (instead of the Bearer token)")
    .option("--data <json>", "request body: JSON, @FILE, or - for stdin (JSON bodies are not part of the signature)")
    .option(SIGNING_OPTIONS.method[0], `${SIGNING_OPTIONS.method[1]} (default: as stored by flow or access-token)`)
    .option(SIGNING_OPTIONS.key[0], `${SIGNING_OPTIONS.key[1]} (default: the one stored)`)
    .addHelpText(
      "after",
      examples(
        "bizctl oauth call GET /api/crm/v1/events",
        "bizctl oauth call GET '/api/crm/v1/events?order=-startsAt&pagesize=5'",
        "bizctl oauth call POST /api/crm/v1/events --data @event.json",
      ),
    )
    .action(withContext(io, call));
}
