import type { Command } from "commander";
import type { Context } from "../../cli/context.js";
import { UsageError } from "../../cli/errors.js";
import { OUT_OF_BAND } from "../../contract/oauth.js";
import { examples, withContext } from "../shared.js";
import { CONSUMER_SECRET, readSecrets, signatureMethodOf, signedExchange } from "./shared.js";

interface Options {
  consumerKey?: string;
  consumerSecretStdin?: boolean;
  callback: string;
  signatureMethod?: string;
}

async function requestToken(ctx: Context, options: Options): Promise<void> {
  if (!options.consumerKey) throw new UsageError("The consumer key is required.", "pass --consumer-key KEY");
  const [secret] = await readSecrets(ctx, [{ ...CONSUMER_SECRET, fromStdin: options.consumerSecretStdin }]);
  const answer = await signedExchange(ctx, {
    consumer: { key: options.consumerKey, secret: secret! },
    protocol: { oauth_callback: options.callback },
    signatureMethod: signatureMethodOf(options.signatureMethod),
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
    .option("--signature-method <method>", "HMAC-SHA1 (default) or HMAC-SHA256")
    .addHelpText(
      "after",
      examples(
        "bizctl oauth request-token --consumer-key <consumer-key>",
        "printf '%s\\n' \"$CONSUMER_SECRET\" | bizctl oauth request-token --consumer-key <consumer-key> --consumer-secret-stdin --json",
        "bizctl oauth request-token --consumer-key <consumer-key> --callback https://app.example.com/oauth/ready",
      ),
    )
    .action(withContext(io, requestToken));
}
