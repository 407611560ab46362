import { readFile } from "node:fs/promises";
import { join } from "node:path";
import type { Command } from "commander";
import type { Context } from "../../../cli/command-context.js";
import { CliError, EXIT, UsageError } from "../../../cli/errors.js";
import { examples, withContext } from "../../verb-helpers.js";
import { storageOptions } from "../options.js";
import { outboxDir, readable } from "./outbox-files.js";

export function register(outbox: Command, io: Context["io"]): void {
  const show = storageOptions(outbox.command("show <id>"));
  show
    .description("print one e-mail: its headers and decoded text (--raw: the file as written; --link: its link only)")
    .option("--raw", "the message as it was written (RFC 5322, quoted-printable)")
    .option("--link", "only the first link of the text (a reset or invitation link)")
    .addHelpText("after", examples("bizctl server outbox show <id>", "bizctl server outbox show <id> --link"))
    .action(
      withContext(io, async (ctx, id: string, options: { raw?: boolean; link?: boolean }) => {
        if (!/^[A-Za-z0-9._-]+$/.test(id))
          throw new UsageError(`'${id}' is not an outbox id.`, "see 'bizctl server outbox'");
        if (options.raw && options.link) throw new UsageError("--raw and --link exclude each other.");
        let source: string;
        try {
          source = await readFile(join(outboxDir(ctx, show, outbox), `${id.replace(/\.eml$/, "")}.eml`), "utf8");
        } catch {
          throw new CliError(
            `No e-mail ${id} in the outbox.`,
            EXIT.notFound,
            "not_found",
            "see 'bizctl server outbox'",
          );
        }
        if (options.raw) return ctx.printText(source);
        const mail = await readable(source);
        if (!options.link) return ctx.printText(mail.text);
        if (!mail.link) throw new CliError(`E-mail ${id} holds no link.`, EXIT.notFound, "not_found");
        ctx.printText(`${mail.link}\n`);
      }),
    );
}
