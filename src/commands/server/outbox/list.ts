import type { Command } from "commander";
import type { Context } from "../../../cli/command-context.js";
import { examples, withContext } from "../../verb-helpers.js";
import { storageOptions } from "../options.js";
import { listOutbox, outboxDir } from "./outbox-files.js";

export function register(outbox: Command, io: Context["io"]): void {
  const list = storageOptions(outbox.command("list"));
  list
    .description("list the e-mails, oldest first")
    .option("--to <addr>", "only those sent to this address")
    .addHelpText("after", examples("bizctl server outbox list --to <e-mail>"))
    .action(
      withContext(io, async (ctx, options: { to?: string }) =>
        ctx.printList(
          await listOutbox(outboxDir(ctx, list, outbox), options.to),
          ["id", "to", "subject", "date"],
          "e-mails in the outbox",
        ),
      ),
    );
}
