import { readFile } from "node:fs/promises";
import type { Command } from "commander";
import type { Context } from "../../../cli/command-context.js";
import { UsageError } from "../../../cli/errors.js";
import { promptText } from "../../../cli/prompts.js";
import * as resources from "../../../contract/resources.js";
import { collect, examples, withContext } from "../../verb-helpers.js";
import { CONSUMER_TYPE, describeConsumer } from "./consumer-resource.js";

interface Options {
  name?: string;
  callback?: string[];
  publicKeyFile?: string;
}

async function create(ctx: Context, options: Options): Promise<void> {
  ctx.requireCredential();
  const name = options.name ?? (ctx.canPrompt() ? await promptText(ctx.io, "Consumer name") : undefined);
  if (!name) throw new UsageError("A consumer needs a name.", "pass --name NAME");
  for (const url of options.callback ?? []) {
    try {
      new URL(url);
    } catch {
      throw new UsageError(`--callback '${url}' is not an absolute URL.`);
    }
  }
  const body: Record<string, unknown> = { resourceType: CONSUMER_TYPE, name, callbackUrls: options.callback ?? [] };
  if (options.publicKeyFile) {
    body.publicKey = await readFile(options.publicKeyFile, "utf8").catch((error: Error) => {
      throw new UsageError(`Cannot read the public key ${options.publicKeyFile}: ${error.message}`);
    });
  }
  const { data } = await (await ctx.client()).call(resources.createResource, { body });
  const created = data as Record<string, unknown>;
  ctx.info(`Created OAuth consumer ${name} (${created.id}). Keep the consumer secret now: it is not shown again.`);
  await ctx.print({ ...describeConsumer(created), consumerSecret: created.consumerSecret });
}

export function register(group: Command, io: Context["io"]): void {
  group
    .command("create")
    .description("register a consumer; prints its key and, once, its secret")
    .option("--name <name>", "the consumer's name")
    .option("--callback <url>", "a callback URL it may use (repeatable); without one only oob works", collect)
    .option(
      "--public-key-file <file>",
      "a PEM RSA public key (>= 2048 bits): the consumer then signs with RSA-SHA1 only",
    )
    .addHelpText(
      "after",
      examples(
        "bizctl oauth consumers create --name Printer --callback https://printer.example.com/ready",
        "bizctl oauth consumers create --name 'CLI tool' --json   # oob only",
        "bizctl oauth consumers create --name Jira --public-key-file <public-key-file>   # RSA-SHA1",
      ),
    )
    .action(withContext(io, create));
}
