import { type Command, Option } from "commander";
import type { Context } from "../../cli/command-context.js";
import { loadServerAdmin } from "../../cli/compose.js";
import { UsageError } from "../../cli/errors.js";
import { examples, withContext } from "../verb-helpers.js";
import { instanceOptions, type StorageFlags, storageOptions } from "./options.js";

const STATUSES = ["queued", "sent", "failed"] as const;

async function mailQueue(ctx: Context, options: StorageFlags & { status?: string; limit: string }): Promise<void> {
  const limit = Number(options.limit);
  if (!Number.isInteger(limit) || limit < 1 || limit > 10_000) {
    throw new UsageError("--limit must be a whole number from 1 to 10000.");
  }
  const { mailQueueInstance } = await loadServerAdmin();
  const rows = await mailQueueInstance({
    ...instanceOptions(options, ctx.io.env),
    status: options.status as (typeof STATUSES)[number] | undefined,
    limit,
  });
  await ctx.printList(
    rows,
    ["id", "status", "to", "subject", "attempts", "nextAttemptAt", "lastError"],
    "mails in the queue",
  );
}

export function register(group: Command, io: Context["io"]): void {
  storageOptions(group.command("mail-queue"))
    .description("the outgoing mail kept in the database: queued, sent (kept 7 days) and given up, oldest first")
    .addOption(new Option("--status <status>", "only messages in this state").choices(STATUSES))
    .addOption(new Option("--limit <n>", "at most this many").default("100"))
    .addHelpText("after", examples("bizctl server mail-queue", "bizctl server mail-queue --status failed --json"))
    .action(withContext(io, mailQueue));
}
