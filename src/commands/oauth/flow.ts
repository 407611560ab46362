import type { Command } from "commander";
import type { Context } from "../../cli/command-context.js";
import { UsageError } from "../../cli/errors.js";
import { OUT_OF_BAND } from "../../contract/oauth.js";
import { examples, withContext } from "../verb-helpers.js";
import { approveTemporary, exchangeAndStore, signedExchange } from "./exchanges.js";
import { CONSUMER_SECRET, privateKeyOf, readSecrets, SIGNING_OPTIONS, signatureMethodOf } from "./signing.js";

interface Options {
  consumerKey?: string;
  consumerSecretStdin?: boolean;
  signatureMethod?: string;
  privateKeyFile?: string;
}

async function flow(ctx: Context, options: Options): Promise<void> {
  ctx.refuseServerOverride("oauth flow");
  if (!options.consumerKey) throw new UsageError("The consumer key is required.", "pass --consumer-key KEY");
  ctx.requireCredential();
  const signatureMethod = signatureMethodOf(options.signatureMethod);
  const privateKey = await privateKeyOf(signatureMethod, options.privateKeyFile);
  const [secret] = privateKey
    ? [""]
    : await readSecrets(ctx, [{ ...CONSUMER_SECRET, fromStdin: options.consumerSecretStdin }]);
  const consumer = { key: options.consumerKey, secret: secret! };
  const temporary = await signedExchange(ctx, {
    consumer,
    protocol: { oauth_callback: OUT_OF_BAND },
    signatureMethod,
    privateKey: privateKey?.pem,
  });
  if (!temporary.oauth_token || !temporary.oauth_token_secret)
    throw new Error("The server sent no temporary credentials.");
  ctx.info("1/3 temporary credentials issued");
  const approval = await approveTemporary(ctx, temporary.oauth_token);
  ctx.info(`2/3 approved as ${ctx.credential()?.stored?.user.userName ?? "the logged-in user"}`);
  const result = await exchangeAndStore(ctx, {
    consumer,
    temporary: { key: temporary.oauth_token, secret: temporary.oauth_token_secret },
    verifier: approval.oauth_verifier,
    signatureMethod,
    privateKey,
  });
  ctx.info("3/3 token credentials issued");
  await ctx.print(result);
}

export function register(group: Command, io: Context["io"]): void {
  group
    .command("flow")
    .description("all three legs for the logged-in user (oob): request, approve, exchange; keeps the token credentials")
    .option("--consumer-key <key>", "the consumer's key")
    .option("--consumer-secret-stdin", "read the consumer secret from the first line of stdin")
    .option(...SIGNING_OPTIONS.method)
    .option(...SIGNING_OPTIONS.key)
    .addHelpText(
      "after",
      examples(
        "bizctl oauth flow --consumer-key <consumer-key>",
        "printf '%s\\n' \"$CONSUMER_SECRET\" | bizctl oauth flow --consumer-key <consumer-key> --consumer-secret-stdin",
        "bizctl oauth flow --consumer-key <consumer-key> --signature-method RSA-SHA1 --private-key-file <private-key-file>",
        "bizctl oauth whoami",
      ),
    )
    .action(withContext(io, flow));
}
