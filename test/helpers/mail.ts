/**
 * Reading the mail the server sends: the .eml files of the outbox mailer, and a real SMTP server
 * (the `smtp-server` package) on a loopback port that keeps every message it receives.
 */
import { readdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { type ParsedMail, simpleParser } from "mailparser";
import { SMTPServer } from "smtp-server";
import { afterAll, beforeAll } from "vitest";

export type { ParsedMail };

/** The recipients of a parsed message, as plain addresses. */
export function recipientsOf(mail: ParsedMail): string[] {
  const to = mail.to === undefined ? [] : Array.isArray(mail.to) ? mail.to : [mail.to];
  return to.flatMap((a) => a.value.map((v) => v.address ?? ""));
}

const LINK = /(\S+\/resetPassword\?token=)([A-Za-z0-9_-]+)/;

/** The reset link of a reset e-mail (from its plain-text part), its base and its token. */
export function resetLinkOf(mail: ParsedMail): { link: string; base: string; token: string } {
  const match = LINK.exec(mail.text ?? "");
  if (!match) throw new Error(`no reset link in the e-mail "${mail.subject}":\n${mail.text}`);
  return { link: match[0], base: match[1]!.replace(/\/resetPassword\?token=$/, ""), token: match[2]! };
}

/** The href of every link in the HTML part. */
export function htmlLinksOf(mail: ParsedMail): string[] {
  const html = typeof mail.html === "string" ? mail.html : "";
  return [...html.matchAll(/<a\s[^>]*href="([^"]*)"/gi)].map((m) => m[1]!.replace(/&amp;/g, "&"));
}

/**
 * The .eml files of `<dataDir>/outbox`: `take()` returns the messages written since the last call
 * (call `app.services.mailer.idle()` first), oldest first.
 */
export function outboxReader(dataDir: string) {
  const dir = join(dataDir, "outbox");
  const seen = new Set<string>();
  return {
    dir,
    async take(): Promise<(ParsedMail & { file: string })[]> {
      let names: string[];
      try {
        names = (await readdir(dir)).filter((n) => n.endsWith(".eml")).sort();
      } catch {
        return [];
      }
      const fresh = names.filter((n) => !seen.has(n));
      for (const n of fresh) seen.add(n);
      return Promise.all(
        fresh.map(async (file) => Object.assign(await simpleParser(await readFile(join(dir, file))), { file })),
      );
    },
  };
}

export interface SmtpSink {
  port: number;
  url: string;
  /** every message received so far, parsed, with its SMTP envelope recipients */
  messages: (ParsedMail & { rcptTo: string[] })[];
  /** SMTP connections opened so far, and the most messages it was receiving at one moment */
  stats: { connections: number; mostAtOnce: number };
  /** resolves with the first message (received so far or later) that matches, or fails after timeoutMs */
  waitFor(match: (mail: ParsedMail & { rcptTo: string[] }) => boolean, timeoutMs?: number): Promise<ParsedMail>;
  close(): Promise<void>;
}

/**
 * A real SMTP server on 127.0.0.1 and an ephemeral port (or the one given: a server that comes up
 * where the app was told it would be): no TLS, no authentication required. `holdMs` makes it take
 * that long to accept each message, as a busy relay does.
 */
export async function startSmtpSink(options: { port?: number; holdMs?: number } = {}): Promise<SmtpSink> {
  const messages: SmtpSink["messages"] = [];
  const stats = { connections: 0, mostAtOnce: 0 };
  let receiving = 0;
  const waiters = new Set<() => void>();
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ["STARTTLS"],
    logger: false,
    // closing, it does not wait for clients to hang up (a server's pooled connections stay open)
    closeTimeout: 100,
    onConnect(_session, callback) {
      stats.connections++;
      callback();
    },
    onData(stream, session, callback) {
      const rcptTo = session.envelope.rcptTo.map((r) => r.address);
      stats.mostAtOnce = Math.max(stats.mostAtOnce, ++receiving);
      simpleParser(stream)
        .then(async (mail) => {
          if (options.holdMs) await new Promise((resolve) => setTimeout(resolve, options.holdMs));
          receiving--;
          messages.push(Object.assign(mail, { rcptTo }));
          for (const wake of waiters) wake();
          callback();
        })
        .catch((error: Error) => {
          receiving--;
          callback(error);
        });
    },
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port ?? 0, "127.0.0.1", () => resolve());
  });
  const { port } = server.server.address() as { port: number };
  return {
    port,
    url: `smtp://127.0.0.1:${port}`,
    messages,
    stats,
    waitFor(match, timeoutMs = 10_000) {
      return new Promise((resolve, reject) => {
        const check = () => {
          const found = messages.find(match);
          if (!found) return;
          clearTimeout(timer);
          waiters.delete(check);
          resolve(found);
        };
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(
            new Error(
              `no matching e-mail within ${timeoutMs} ms; received: ${JSON.stringify(messages.map((m) => [m.rcptTo, m.subject]))}`,
            ),
          );
        }, timeoutMs);
        waiters.add(check);
        check();
      });
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/**
 * Asks for a reset link for `userName` through the API and returns the token of the newest reset
 * e-mail to `email` in the outbox of the test server's default mailer.
 */
export async function requestResetToken(
  server: {
    app: {
      inject: (request: object) => Promise<{ statusCode: number }>;
      services: { mailer: { idle(): Promise<void> } };
    };
    dataDir: string;
  },
  who: { userName: string; email: string },
): Promise<string> {
  const asked = await server.app.inject({ method: "POST", url: "/renewPassword", payload: { userName: who.userName } });
  if (asked.statusCode !== 202) throw new Error(`renewPassword answered ${asked.statusCode}`);
  await server.app.services.mailer.idle();
  const mails = await outboxReader(server.dataDir).take();
  const mine = mails.filter((mail) => recipientsOf(mail).includes(who.email) && LINK.test(mail.text ?? ""));
  const newest = mine.at(-1);
  if (!newest) throw new Error(`no reset e-mail to ${who.email} in the outbox`);
  return resetLinkOf(newest).token;
}

/** startSmtpSink() in a beforeAll of the describe block it is called in, closed in its afterAll. */
export function useSmtpSink(): SmtpSink {
  const sink = {} as SmtpSink;
  beforeAll(async () => {
    Object.assign(sink, await startSmtpSink());
  });
  afterAll(async () => {
    await sink.close?.();
  });
  return sink;
}
