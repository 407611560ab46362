import type { Command } from "commander";
import type { Context } from "../../cli/command-context.js";
import { UsageError } from "../../cli/errors.js";
import { examples, withContext } from "../verb-helpers.js";
import { exchangeAndStore } from "./exchanges.js";
import {
  CONSUMER_SECRET,
  privateKeyOf,
  readSecrets,
  SIGNING_OPTIONS,
  signatureMethodOf,
  TOKEN_SECRET,
} from "./signing.js";

interface Options {
  consumerKey?: string;
  consumerSecretStdin?: boolean;
  token?: string;
  tokenSecretStdin?: boolean;
  verifier?: string;
  signatureMethod?: string;
  privateKeyFile?: string;
}

async function accessToken(ctx: Context, options: Options): Promise<void> {
  ctx.refuseServerOverride("oauth access-token");
  if (!options.consumerKey) throw new UsageError("The consumer key is required.", "pass --consumer-key KEY");
  if (!options.token) throw new UsageError("The temporary token is required.", "pass --token TOKEN");
  if (!options.verifier) throw new UsageError("The verifier is required.", "pass --verifier VERIFIER");
  const signatureMethod = signatureMethodOf(options.signatureMethod);
  const privateKey = await privateKeyOf(signatureMethod, options.privateKeyFile);
  // RSA-SHA1 signs with the private key alone: neither secret takes part
  const [consumerSecret, tokenSecret] = privateKey
    ? ["", ""]
    : await readSecrets(ctx, [
        { ...CONSUMER_SECRET, fromStdin: options.consumerSecretStdin },
        { ...TOKEN_SECRET, label: "Temporary token secret", fromStdin: options.tokenSecretStdin },
      ]);
  const result = await exchangeAndStore(ctx, {
    consumer: { key: options.consumerKey, secret: consumerSecret! },
    temporary: { key: options.token, secret: tokenSecret! },
    verifier: options.verifier,
    signatureMethod,
    privateKey,
  });
  await ctx.print(result);
}

export function register(group: Command, io: Context["io"]): void {
  group
    .command("access-token")
    .description(
      "exchange approved temporary credentials for token credentials (the third leg); keeps them in the profile",
    )
    .option("--consumer-key <key>", "the consumer's key")
    .option("--consumer-secret-stdin", "read the consumer secret from stdin (the first line)")
    .option("--token <token>", "the temporary token")
    .option(
      "--token-secret-stdin",
      "read the temporary token secret from stdin (the line after the consumer secret, or the first)",
    )
    .option("--verifier <verifier>", "the verifier the resource owner got")
    .option(...SIGNING_OPTIONS.method)
    .option(...SIGNING_OPTIONS.key)
    .addHelpText(
      "after",
      examples(
        "bizctl oauth access-token --consumer-key <consumer-key> --token <temporary-token> --verifier <verifier>",
        'printf \'%s\\n%s\\n\' "$CONSUMER_SECRET" "$TOKEN_SECRET" | bizctl oauth access-token --consumer-key <consumer-key> \\\n      --consumer-secret-stdin --token <temporary-token> --token-secret-stdin --verifier <verifier>',
      ),
    )
    .action(withContext(io, accessToken));
}
