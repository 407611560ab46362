import { readdir, readFile, stat } from "node:fs/promises";
import { join } from "node:path";
import type { Command } from "commander";
import type { Context } from "../../../cli/command-context.js";
import { resolveDataDir } from "../options.js";

/**
 * The outbox of the data dir the command names. `--data-dir` after `list` or `show` is parsed by
 * `outbox` (commander takes a parent's options anywhere on the line), so the subcommand's own
 * value is only its environment variable: a value given on the command line, on either of the
 * two, wins.
 */
export function outboxDir(ctx: Context, command: Command, outbox: Command): string {
  const given = [command, outbox].find((c) => c.getOptionValueSource("dataDir") === "cli") ?? command;
  const dataDir = (given.opts().dataDir ?? outbox.opts().dataDir) as string | undefined;
  return join(resolveDataDir({ dataDir }, ctx.io.env), "outbox");
}

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

/** The e-mails of the outbox, oldest first: their id, recipient, subject, date and size. */
export async function listOutbox(dir: string, to?: string) {
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
export async function readable(source: string): Promise<{ text: string; link?: string }> {
  const { simpleParser } = await import("mailparser");
  const mail = await simpleParser(source);
  const to = Array.isArray(mail.to) ? mail.to.map((a) => a.text).join(", ") : (mail.to?.text ?? "");
  const body = mail.text ?? "";
  const header = [`From: ${mail.from?.text ?? ""}`, `To: ${to}`, `Subject: ${mail.subject ?? ""}`];
  if (mail.date) header.push(`Date: ${mail.date.toISOString()}`);
  return { text: `${header.join("\n")}\n\n${body.trimEnd()}\n`, link: /https?:\/\/\S+/.exec(body)?.[0] };
}
