import type { Command } from "commander";
import type { Context } from "../../cli/command-context.js";
import { UsageError } from "../../cli/errors.js";
import { OUT_OF_BAND } from "../../contract/oauth.js";
import { examples, withContext } from "../verb-helpers.js";
import { signedExchange } from "./exchanges.js";
import { CONSUMER_SECRET, privateKeyOf, readSecrets, SIGNING_OPTIONS, signatureMethodOf } from "./signing.js";

interface Options {
  consumerKey?: string;
  consumerSecretStdin?: boolean;
  callback: string;
  signatureMethod?: string;
  privateKeyFile?: string;
}

async function requestToken(ctx: Context, options: Options): Promise<void> {
  if (!options.consumerKey) throw new UsageError("The consumer key is required.", "pass --consumer-key KEY");
  const signatureMethod = signatureMethodOf(options.signatureMethod);
  const privateKey = await privateKeyOf(signatureMethod, options.privateKeyFile);
  // RSA-SHA1 signs with the private key alone: no consumer secret to read
  const [secret] = privateKey
    ? [""]
    : await readSecrets(ctx, [{ ...CONSUMER_SECRET, fromStdin: options.consumerSecretStdin }]);
  const answer = await signedExchange(ctx, {
    consumer: { key: options.consumerKey, secret: secret! },
    protocol: { oauth_callback: options.callback },
    signatureMethod,
    privateKey: privateKey?.pem,
  });
  ctx.info(
    `Temporary credentials issued (valid 10 minutes); the resource owner approves them with 'bizctl oauth authorize ${answer.oauth_token}'.`,
  );
  await ctx.print({
    oauth_token: answer.oauth_token,
    oauth_token_secret: answer.oauth_token_secret,
    oauth_callback_confirmed: answer.oauth_callback_confirmed === "true",
  });
}

export function register(group: Command, io: Context["io"]): void {
  group
    .command("request-token")
    .description("get temporary credentials for a consumer (the first leg, signed with the consumer secret)")
    .option("--consumer-key <key>", "the consumer's key")
    .option("--consumer-secret-stdin", "read the consumer secret from the first line of stdin")
    .option("--callback <url>", "a callback URL registered for the consumer, or oob", OUT_OF_BAND)
    .option(...SIGNING_OPTIONS.method)
    .option(...SIGNING_OPTIONS.key)
    .addHelpText(
      "after",
      examples(
        "bizctl oauth request-token --consumer-key <consumer-key>",
        "printf '%s\\n' \"$CONSUMER_SECRET\" | bizctl oauth request-token --consumer-key <consumer-key> --consumer-secret-stdin --json",
        "bizctl oauth request-token --consumer-key <consumer-key> --callback https://app.example.com/oauth/ready",
        "bizctl oauth request-token --consumer-key <consumer-key> --signature-method RSA-SHA1 --private-key-file <private-key-file>",
      ),
    )
    .action(withContext(io, requestToken));
}
