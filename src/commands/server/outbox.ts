import { readdir, readFile, stat } from "node:fs/promises";
import { join } from "node:path";
import type { Command } from "commander";
import type { Context } from "../../cli/context.js";
import { CliError, EXIT, UsageError } from "../../cli/errors.js";
import { examples, withContext } from "../shared.js";
import { resolveDataDir, storageOptions } from "./options.js";

/** The subject, recipient and date of an .eml file, read from its headers (RFC 5322, unfolded). */
function headersOf(text: string): Record<string, string> {
  const head = text.split(/\r?\n\r?\n/, 1)[0] ?? "";
  const headers: Record<string, string> = {};
  for (const line of head.replace(/\r?\n[ \t]+/g, " ").split(/\r?\n/)) {
    const colon = line.indexOf(":");
    if (colon > 0) headers[line.slice(0, colon).toLowerCase()] = line.slice(colon + 1).trim();
  }
  return headers;
}

async function listOutbox(dir: string) {
  let names: string[];
  try {
    names = (await readdir(dir)).filter((n) => n.endsWith(".eml")).sort();
  } catch {
    return [];
  }
  return Promise.all(
    names.map(async (name) => {
      const headers = headersOf(await readFile(join(dir, name), "utf8"));
      return {
        id: name.replace(/\.eml$/, ""),
        to: headers.to ?? "",
        subject: headers.subject ?? "",
        date: headers.date ?? "",
        size: (await stat(join(dir, name))).size,
      };
    }),
  );
}

export function register(group: Command, io: Context["io"]): void {
  const outbox = storageOptions(group.command("outbox"))
    .description("the e-mails the server wrote to <data-dir>/outbox (when no --smtp-url is set)")
    .addHelpText(
      "after",
      examples("bizctl server outbox", "bizctl server outbox show 2027-01-10T09-00-00-000Z-1a2b3c4d"),
    );
  /**
   * `--data-dir` after `list` or `show` is parsed by `outbox` (commander takes a parent's options
   * anywhere on the line), so the subcommand's own value is only its environment variable: a value
   * given on the command line, on either of the two, wins.
   */
  const dirOf = (ctx: Context, command: Command) => {
    const given = [command, outbox].find((c) => c.getOptionValueSource("dataDir") === "cli") ?? command;
    const dataDir = (given.opts().dataDir ?? outbox.opts().dataDir) as string | undefined;
    return join(resolveDataDir({ dataDir }, ctx.io.env), "outbox");
  };
  outbox.action(
    withContext(io, async (ctx) => ctx.print(await listOutbox(dirOf(ctx, outbox)), ["id", "to", "subject", "date"])),
  );
  const list = storageOptions(outbox.command("list"));
  list
    .description("list the e-mails, oldest first")
    .action(
      withContext(io, async (ctx) => ctx.print(await listOutbox(dirOf(ctx, list)), ["id", "to", "subject", "date"])),
    );
  const show = storageOptions(outbox.command("show <id>"));
  show.description("print one e-mail as it was written (RFC 5322)").action(
    withContext(io, async (ctx, id: string) => {
      if (!/^[A-Za-z0-9._-]+$/.test(id))
        throw new UsageError(`'${id}' is not an outbox id.`, "see 'bizctl server outbox'");
      try {
        ctx.printText(await readFile(join(dirOf(ctx, show), `${id.replace(/\.eml$/, "")}.eml`), "utf8"));
      } catch {
        throw new CliError(`No e-mail ${id} in the outbox.`, EXIT.notFound, "not_found", "see 'bizctl server outbox'");
      }
    }),
  );
}
