import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Transporter } from "nodemailer";
import type { MailMessage } from "./types.js";

// Where a message goes once it leaves the queue: an SMTP server, or an .eml file in the outbox.

export interface MailTransport {
  /** sends one message; its id (SMTP) or file name (outbox) */
  send(message: MailMessage): Promise<string>;
  close(): Promise<void>;
}

export interface TransportOptions {
  smtpUrl?: string;
  outboxDir: string;
  from: string;
}

// each bounded well under the lease, so that a slow server cannot make two senders send one message
const SMTP_TIMEOUTS = { connectionTimeout: 30_000, greetingTimeout: 30_000, socketTimeout: 60_000 };

/** Where mail goes, for logs: the SMTP URL without its password, or the outbox directory. */
export function describeTransport(options: TransportOptions): string {
  if (!options.smtpUrl) return options.outboxDir;
  try {
    const parsed = new URL(options.smtpUrl);
    if (parsed.password) parsed.password = "***";
    return parsed.toString();
  } catch {
    return "smtp";
  }
}

/**
 * nodemailer over SMTP when a URL is given (smtp:// with STARTTLS when offered, smtps:// for TLS);
 * otherwise each message is written as an .eml file into the outbox directory. nodemailer is the
 * largest package of the server: a process without the sender loop (an embedded CLI command, which
 * mostly sends nothing) loads it with its first message; one with the loop (`poolSize` given) loads
 * it at once, in the background, so that its first attempt takes as long as any other.
 */
export function createTransport(options: TransportOptions, poolSize?: number): MailTransport {
  let transport: Promise<Transporter> | undefined;
  const load = () => {
    transport ??= import("nodemailer").then(({ default: nodemailer }) => {
      if (!options.smtpUrl) return nodemailer.createTransport({ streamTransport: true, buffer: true, newline: "unix" });
      // the URL's own parameters (?connectionTimeout=…) still win over these; a sender loop keeps
      // its connections open between messages (closed with the app), a one-off message does not
      const smtp = nodemailer.createTransport({
        url: options.smtpUrl,
        ...SMTP_TIMEOUTS,
        ...(poolSize !== undefined && { pool: true, maxConnections: poolSize }),
      });
      // a pooled connection's failure fails the message it carries, which the queue retries;
      // unheard, an 'error' event of the transporter would end the process
      smtp.on("error", () => {});
      return smtp;
    });
    return transport;
  };
  // a failure to load is reported by the first attempt that needs it
  if (poolSize !== undefined) load().catch(() => {});
  const close = async () => {
    (await transport?.catch(() => undefined))?.close();
  };
  if (options.smtpUrl) {
    return {
      send: async (message) => String((await (await load()).sendMail({ from: options.from, ...message })).messageId),
      close,
    };
  }
  const send = async (message: MailMessage) => {
    const info = await (await load()).sendMail({ from: options.from, ...message });
    mkdirSync(options.outboxDir, { recursive: true, mode: 0o700 });
    const name = `${new Date().toISOString().replace(/[:.]/g, "-")}-${crypto.randomUUID().slice(0, 8)}.eml`;
    writeFileSync(join(options.outboxDir, name), info.message as Buffer, { mode: 0o600 });
    return name;
  };
  return { send, close };
}
