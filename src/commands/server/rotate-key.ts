import type { Command } from "commander";
import { Option } from "commander";
import type { Context } from "../../cli/command-context.js";
import { loadServerAdmin } from "../../cli/compose.js";
import { UsageError } from "../../cli/errors.js";
import { examples, withContext } from "../verb-helpers.js";
import { instanceOptions, type StorageFlags, storageOptions } from "./options.js";

interface Options extends StorageFlags {
  publishFor: string;
  tokenTtl: string;
}

function seconds(value: string, flag: string): number {
  if (!/^[0-9]{1,9}$/.test(value)) throw new UsageError(`${flag} takes a whole number of seconds.`);
  return Number(value);
}

async function rotateKey(ctx: Context, options: Options): Promise<void> {
  const { rotateKeyInstance } = await loadServerAdmin();
  const result = await rotateKeyInstance({
    ...instanceOptions(options, ctx.io.env),
    publishSeconds: seconds(options.publishFor, "--publish-for"),
    tokenTtlSeconds: seconds(options.tokenTtl, "--token-ttl"),
  });
  ctx.info(
    `New signing key ${result.kid} in ${result.storage}: published now (running servers see it within 30 s), signing from ${result.signFrom}.` +
      (result.removed.length ? ` Removed keys no valid token can carry: ${result.removed.join(", ")}.` : ""),
  );
  await ctx.print(result);
}

export function register(group: Command, io: Context["io"]): void {
  storageOptions(group.command("rotate-key"))
    .description("add a new JWT signing key: published now, signing later; retire keys no token needs")
    .option("--publish-for <seconds>", "how long the key is only published before it signs", "600")
    .addOption(
      new Option("--token-ttl <seconds>", "the servers' token lifetime").env("BIZCTL_TOKEN_TTL").default("28800"),
    )
    .addHelpText(
      "after",
      examples("bizctl server rotate-key", "bizctl server rotate-key --data-dir /var/lib/bizctl --publish-for 3600"),
    )
    .action(withContext(io, rotateKey));
}
