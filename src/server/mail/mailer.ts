import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import type { FastifyBaseLogger } from "fastify";
import nodemailer from "nodemailer";

export interface MailMessage {
  to: string;
  subject: string;
  text: string;
  html: string;
}

export interface Mailer {
  /** where mail goes, for logs: the SMTP host or the outbox directory */
  readonly describe: string;
  /**
   * Delivers in the background, retrying; failures are logged, never reported to the caller.
   * A function is run first in the background too, and what it returns is delivered.
   */
  enqueue(message: MailMessage | (() => Promise<MailMessage[]>)): void;
  /** resolves when everything enqueued so far has been delivered or given up (tests) */
  idle(): Promise<void>;
  /** stops waiting between retries (what is still undelivered is logged and dropped), then waits for the rest */
  close(): Promise<void>;
}

export interface MailerOptions {
  smtpUrl?: string;
  outboxDir: string;
  from: string;
  log: () => FastifyBaseLogger;
  retries?: number;
  retryDelayMs?: number;
}

function redacted(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = "***";
    return parsed.toString();
  } catch {
    return "smtp";
  }
}

/**
 * nodemailer over SMTP when a URL is given (smtp:// with STARTTLS when offered, smtps:// for TLS);
 * otherwise each message is written as an .eml file into the outbox directory.
 */
export function createMailer(options: MailerOptions): Mailer {
  const smtp = options.smtpUrl ? nodemailer.createTransport(options.smtpUrl) : undefined;
  const stream = nodemailer.createTransport({ streamTransport: true, buffer: true, newline: "unix" });
  const pending = new Set<Promise<void>>();
  const closing = new AbortController();
  const retries = options.retries ?? 3;
  const retryDelayMs = options.retryDelayMs ?? 2000;

  async function deliverOnce(message: MailMessage): Promise<string> {
    const envelope = { from: options.from, ...message };
    if (smtp) {
      const info = await smtp.sendMail(envelope);
      return String(info.messageId);
    }
    const info = await stream.sendMail(envelope);
    mkdirSync(options.outboxDir, { recursive: true, mode: 0o700 });
    const name = `${new Date().toISOString().replace(/[:.]/g, "-")}-${crypto.randomUUID().slice(0, 8)}.eml`;
    writeFileSync(join(options.outboxDir, name), info.message as Buffer, { mode: 0o600 });
    return name;
  }

  async function deliver(message: MailMessage): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      try {
        const id = await deliverOnce(message);
        options.log().info({ mail: id, subject: message.subject }, "mail sent");
        return;
      } catch (error) {
        const log = options.log();
        if (attempt > retries || closing.signal.aborted) {
          log.error({ err: error, subject: message.subject }, "mail not sent; giving up");
          return;
        }
        log.warn({ err: error, attempt }, "mail not sent; retrying");
        await sleep(retryDelayMs * attempt, undefined, { signal: closing.signal }).catch(() => {});
      }
    }
  }

  return {
    describe: options.smtpUrl ? redacted(options.smtpUrl) : options.outboxDir,
    enqueue(message) {
      const job = (async () => {
        const messages = typeof message === "function" ? await message() : [message];
        await Promise.all(messages.map(deliver));
      })()
        .catch((error) => options.log().error({ err: error }, "preparing mail failed"))
        .finally(() => pending.delete(job));
      pending.add(job);
    },
    async idle() {
      while (pending.size) await Promise.all([...pending]);
    },
    async close() {
      closing.abort();
      while (pending.size) await Promise.all([...pending]);
    },
  };
}
