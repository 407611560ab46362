import type { Command } from "commander";
import type { Context } from "../../../cli/command-context.js";
import { examples, withContext } from "../../verb-helpers.js";
import { storageOptions } from "../options.js";
import * as list from "./list.js";
import { listOutbox, outboxDir } from "./outbox-files.js";
import * as show from "./show.js";

export function register(group: Command, io: Context["io"]): void {
  const outbox = storageOptions(group.command("outbox"))
    .description("the e-mails the server wrote to <data-dir>/outbox (when no --smtp-url is set)")
    .addHelpText("after", examples("bizctl server outbox", "bizctl server outbox show <id>"));
  outbox.action(
    withContext(io, async (ctx) =>
      ctx.printList(
        await listOutbox(outboxDir(ctx, outbox, outbox)),
        ["id", "to", "subject", "date"],
        "e-mails in the outbox",
      ),
    ),
  );
  for (const verb of [list, show]) verb.register(outbox, io);
}
