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

/** Whether a To header names this address (compared case-insensitively, as mail systems do). */
function addressedTo(header: string, address: string): boolean {
  const wanted = address.trim().toLowerCase();
  return header
    .toLowerCase()
    .split(",")
    .some((part) => (/<([^>]*)>/.exec(part)?.[1] ?? part).trim() === wanted);
}

async function listOutbox(dir: string, to?: string) {
  let names: string[];
  try {
    names = (await readdir(dir)).filter((n) => n.endsWith(".eml")).sort();
  } catch {
    return [];
  }
  const all = await Promise.all(
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
  return to === undefined ? all : all.filter((mail) => addressedTo(mail.to, to));
}

/**
 * An e-mail as a person reads it: the headers that matter and the decoded text part (the file
 * holds it quoted-printable, which splits a link across lines).
 */
async function readable(source: string): Promise<{ text: string; link?: string }> {
  const { simpleParser } = await import("mailparser");
  const mail = await simpleParser(source);
  const to = Array.isArray(mail.to) ? mail.to.map((a) => a.text).join(", ") : (mail.to?.text ?? "");
  const body = mail.text ?? "";
  const header = [`From: ${mail.from?.text ?? ""}`, `To: ${to}`, `Subject: ${mail.subject ?? ""}`];
  if (mail.date) header.push(`Date: ${mail.date.toISOString()}`);
  return { text: `${header.join("\n")}\n\n${body.trimEnd()}\n`, link: /https?:\/\/\S+/.exec(body)?.[0] };
}

export function register(group: Command, io: Context["io"]): void {
  const outbox = storageOptions(group.command("outbox"))
    .description("the e-mails the server wrote to <data-dir>/outbox (when no --smtp-url is set)")
    .addHelpText("after", examples("bizctl server outbox", "bizctl server outbox show <id>"));
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
    withContext(io, async (ctx) =>
      ctx.printList(await listOutbox(dirOf(ctx, outbox)), ["id", "to", "subject", "date"], "e-mails in the outbox"),
    ),
  );
  const list = storageOptions(outbox.command("list"));
  list
    .description("list the e-mails, oldest first")
    .option("--to <addr>", "only those sent to this address")
    .addHelpText("after", examples("bizctl server outbox list --to <e-mail>"))
    .action(
      withContext(io, async (ctx, options: { to?: string }) =>
        ctx.printList(
          await listOutbox(dirOf(ctx, list), options.to),
          ["id", "to", "subject", "date"],
          "e-mails in the outbox",
        ),
      ),
    );
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
          source = await readFile(join(dirOf(ctx, show), `${id.replace(/\.eml$/, "")}.eml`), "utf8");
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
