import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { FastifyBaseLogger } from "fastify";
import type { Kysely } from "kysely";
import type { Transporter } from "nodemailer";
import type { Store } from "../store/database.js";
import {
  claimMail,
  deleteClaimedJob,
  insertJob,
  insertLinkMail,
  insertMail,
  markMailFailed,
  markMailRetry,
  markMailSent,
  nextMailDue,
  pruneSentMail,
  type QueuedMail,
} from "../store/mail-queue-repo.js";
import type { MailKind, Schema } from "../store/schema.js";

export interface MailMessage {
  to: string;
  subject: string;
  text: string;
  html: string;
}

/** Queues a message in the transaction it is given. */
export type QueueMail = (message: MailMessage) => Promise<void>;

/**
 * Queues a message that carries a single-use link, in the transaction it is given; returns the
 * message's id. The queue keeps only `content` (what the message says beside the link, as JSON):
 * the link is made by the link renderer as the message is sent, so that it never reaches the
 * database, its write-ahead log or a backup.
 */
export type QueueLink = (link: { to: string; subject: string; content: object }) => Promise<string>;

/** Both ways of queueing, for the work of one transaction. */
export interface Queues {
  mail: QueueMail;
  link: QueueLink;
}

export type JobKind = Exclude<MailKind, "message" | "link">;

/**
 * What the sender does with a job: in one transaction with the deletion of the job, so that the
 * mail it queues and the job's end commit together (a failure leaves the job to retry).
 */
export type JobHandler = (trx: Kysely<Schema>, request: unknown, queue: Queues) => Promise<void>;

/**
 * Makes the message of a queued link as it is sent, in a transaction of its own: a fresh token
 * bound to the message's link; undefined when the link is void by then (nothing is sent).
 */
export type LinkRenderer = (trx: Kysely<Schema>, mailId: string, content: unknown) => Promise<MailMessage | undefined>;

export interface Mailer {
  /** where mail goes, for logs: the SMTP host or the outbox directory */
  readonly describe: string;
  /**
   * Runs work in one database transaction; the mail it queues commits or rolls back with the
   * change that causes it, and the sender looks at the queue once it has committed.
   */
  transaction<T>(work: (trx: Kysely<Schema>, queue: Queues) => Promise<T>): Promise<T>;
  /**
   * Queues a job for a sender (one insert): the caller's request path stays the same whatever the
   * job will find. With the loop it becomes due after a random delay of up to jobDelayMs, so
   * that its work does not fall on the requests that come right after it.
   */
  queueJob(kind: JobKind, request: object): Promise<void>;
  /** what the sender does with the jobs of one kind (set once, as the app is built) */
  handleJobs(kind: JobKind, handler: JobHandler): void;
  /** how the sender makes the messages of queued links (set once, as the app is built) */
  renderLinks(renderer: LinkRenderer): void;
  /** starts the sender loop (after the app is built: the loop logs) */
  start(): void;
  /**
   * Resolves when the jobs this app queued are due and a pass of the sender has done every due
   * job and tried every due message once (tests); without the loop, the jobs and messages this
   * app queued, whatever their due time.
   */
  idle(): Promise<void>;
  /**
   * Stops the loop without waiting for any retry, then does each job and tries once each message
   * this app queued and never tried, a job not yet due included: the embedded CLI, one request
   * per process, still delivers its mail. Whatever is left stays queued for the next sender.
   */
  close(): Promise<void>;
}

export interface MailerOptions {
  store: Store;
  smtpUrl?: string;
  outboxDir: string;
  from: string;
  log: () => FastifyBaseLogger;
  /** the first retry waits this long; each further one twice as long, up to maxRetryDelayMs */
  retryDelayMs?: number;
  maxRetryDelayMs?: number;
  /** attempts before a message is given up (status failed, kept with its last error) */
  maxAttempts?: number;
  /** how long a claim holds a message; longer than any send can take (the SMTP timeouts below) */
  leaseMs?: number;
  /** the loop looks at the queue at least this often (messages other instances left) */
  pollIntervalMs?: number;
  /** sent messages are deleted after this long */
  retentionMs?: number;
  /** without the loop, only the mail this app queued is sent, once, on idle() or as it closes */
  loop?: boolean;
  /** with the loop, a job is due after a random delay of up to this long */
  jobDelayMs?: number;
}

export const MAIL_DEFAULTS = {
  retryDelayMs: 5_000,
  maxRetryDelayMs: 15 * 60_000,
  maxAttempts: 20,
  leaseMs: 5 * 60_000,
  pollIntervalMs: 10_000,
  retentionMs: 7 * 24 * 3600_000,
  jobDelayMs: 1_000,
} as const;

// each bounded well under the lease, so that a slow server cannot make two senders send one message
const SMTP_TIMEOUTS = { connectionTimeout: 30_000, greetingTimeout: 30_000, socketTimeout: 60_000 };

/**
 * Messages a sender loop has in hand at once, each on its own pooled SMTP connection. One at a time,
 * a message's round trips (claim, SMTP dialogue, mark sent) left both the database and the SMTP
 * server idle most of the time: 10 000 invitations took half an hour to leave.
 */
export const MAIL_SENDERS = 4;

/** How many of its own messages a closing app looks for at once (its last pass). */
const OWN_MAIL_CHUNK = 500;

function redacted(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = "***";
    return parsed.toString();
  } catch {
    return "smtp";
  }
}

/** What went wrong, short and without the message: it is kept in the queue and logged. */
function describeError(error: unknown): string {
  const text = error instanceof Error ? error.message : String(error);
  return text.replace(/\s+/g, " ").slice(0, 500);
}

/**
 * nodemailer over SMTP when a URL is given (smtp:// with STARTTLS when offered, smtps:// for TLS);
 * otherwise each message is written as an .eml file into the outbox directory. nodemailer is the
 * largest package of the server: a process without the sender loop (an embedded CLI command, which
 * mostly sends nothing) loads it with its first message; one with the loop loads it at once, in the
 * background, so that its first attempt takes as long as any other.
 */
function createTransport(options: MailerOptions, loop: boolean): MailTransport {
  let transport: Promise<Transporter> | undefined;
  const load = () => {
    transport ??= import("nodemailer").then(({ default: nodemailer }) => {
      if (!options.smtpUrl) return nodemailer.createTransport({ streamTransport: true, buffer: true, newline: "unix" });
      // the URL's own parameters (?connectionTimeout=…) still win over these; a sender loop keeps
      // its connections open between messages (closed with the app), a one-off message does not
      const smtp = nodemailer.createTransport({
        url: options.smtpUrl,
        ...SMTP_TIMEOUTS,
        ...(loop && { pool: true, maxConnections: MAIL_SENDERS }),
      });
      // a pooled connection's failure fails the message it carries, which the queue retries;
      // unheard, an 'error' event of the transporter would end the process
      smtp.on("error", () => {});
      return smtp;
    });
    return transport;
  };
  // a failure to load is reported by the first attempt that needs it
  if (loop) load().catch(() => {});
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

interface MailTransport {
  send(message: MailMessage): Promise<string>;
  close(): Promise<void>;
}

/**
 * The mail queue and this instance's senders. Messages are rows of `mail_queue`; each sender (up to
 * MAIL_SENDERS at once) claims one due message at a time with a lease, sends it, and marks it sent
 * (at least once: see README).
 */
export function createMailer(options: MailerOptions): Mailer {
  const { db, dialect } = options.store;
  const settings = {
    retryDelayMs: options.retryDelayMs ?? MAIL_DEFAULTS.retryDelayMs,
    maxRetryDelayMs: options.maxRetryDelayMs ?? MAIL_DEFAULTS.maxRetryDelayMs,
    maxAttempts: options.maxAttempts ?? MAIL_DEFAULTS.maxAttempts,
    leaseMs: options.leaseMs ?? MAIL_DEFAULTS.leaseMs,
    pollIntervalMs: options.pollIntervalMs ?? MAIL_DEFAULTS.pollIntervalMs,
    retentionMs: options.retentionMs ?? MAIL_DEFAULTS.retentionMs,
    jobDelayMs: options.jobDelayMs ?? MAIL_DEFAULTS.jobDelayMs,
  };
  const handlers = new Map<JobKind, JobHandler>();
  let renderLink: LinkRenderer | undefined;
  // when the last job this app queued becomes due: idle() waits for it
  let lastJobDue = 0;
  const loop = options.loop ?? false;
  const deliver = createTransport(options, loop);
  const claimer = crypto.randomUUID();
  // what this app queued: the messages a closing app still owes a first attempt
  const queuedHere = new Set<string>();
  let closing = false;
  let started = false;
  let timer: NodeJS.Timeout | undefined;
  let chain: Promise<void> = Promise.resolve();
  let nextPass: Promise<void> | undefined;
  let prunedAt = 0;

  const backoff = (attempts: number) =>
    Math.min(settings.retryDelayMs * 2 ** Math.max(0, attempts - 1), settings.maxRetryDelayMs);

  /** The queues of a transaction: each message or link becomes a row; `queued` collects their ids. */
  function queuesInto(trx: Kysely<Schema>, queued: string[]): Queues {
    return {
      mail: async (message) => {
        const id = crypto.randomUUID();
        await insertMail(trx, {
          id,
          recipient: message.to,
          subject: message.subject,
          text: message.text,
          html: message.html,
          now: new Date(),
        });
        queued.push(id);
      },
      link: async (link) => {
        const id = crypto.randomUUID();
        await insertLinkMail(trx, {
          id,
          recipient: link.to,
          subject: link.subject,
          content: link.content,
          now: new Date(),
        });
        queued.push(id);
        return id;
      },
    };
  }

  /** The message of a claimed row: as queued, or, for a link, made now; undefined for a void link. */
  async function messageOf(mail: QueuedMail): Promise<MailMessage | undefined> {
    if (mail.kind === "message") {
      return { to: mail.recipient, subject: mail.subject, text: mail.body_text ?? "", html: mail.body_html ?? "" };
    }
    const render = renderLink;
    if (!render) throw new Error("no renderer for queued links");
    return db.transaction().execute((trx) => render(trx, mail.id, JSON.parse(mail.body_text ?? "null")));
  }

  /**
   * What this app queued, for its last pass as it closes. With the loop, which sends them anyway,
   * the last 1000 are enough; without it (the embedded CLI) that pass is the only sender, so every
   * one is kept: an import of 5 000 users with --invite must send 5 000 invitations.
   */
  function remember(ids: string[]): void {
    for (const id of ids) queuedHere.add(id);
    if (!loop) return;
    while (queuedHere.size > 1000) queuedHere.delete(queuedHere.values().next().value as string);
  }

  /** After the commit: the messages are this app's to send on close, and the loop looks at them. */
  function committed(queued: string[]): void {
    remember(queued);
    if (queued.length) wake();
  }

  /** Does a job and deletes it in one transaction; the mail it queues is sent like any other. */
  async function runJob(mail: QueuedMail): Promise<void> {
    const handler = handlers.get(mail.kind as JobKind);
    if (!handler) throw new Error(`no handler for the job kind ${mail.kind}`);
    const queued: string[] = [];
    await db.transaction().execute(async (trx) => {
      // the lease ran out and another sender took the job over: it is theirs
      if (!(await deleteClaimedJob(trx, mail.id, claimer))) return;
      await handler(trx, JSON.parse(mail.body_text ?? "null"), queuesInto(trx, queued));
    });
    committed(queued);
  }

  async function attempt(mail: QueuedMail): Promise<void> {
    const log = options.log();
    let id: string;
    try {
      if (mail.kind !== "message" && mail.kind !== "link") {
        await runJob(mail);
        queuedHere.delete(mail.id);
        return;
      }
      const message = await messageOf(mail);
      if (!message) {
        queuedHere.delete(mail.id);
        await markMailFailed(db, mail.id, claimer, { error: "not sent: its link was used or voided before it left" });
        log.info({ queued: mail.id, subject: mail.subject }, "mail not sent: its link is void");
        return;
      }
      id = await deliver.send(message);
    } catch (error) {
      queuedHere.delete(mail.id);
      const reason = describeError(error);
      if (mail.attempts >= settings.maxAttempts) {
        await markMailFailed(db, mail.id, claimer, { error: reason });
        log.error({ err: error, mail: mail.id, attempts: mail.attempts }, "mail not sent; giving up");
        return;
      }
      const nextAttemptAt = new Date(Date.now() + backoff(mail.attempts));
      await markMailRetry(db, mail.id, claimer, { error: reason, nextAttemptAt });
      log.warn({ err: error, mail: mail.id, attempt: mail.attempts, nextAttemptAt }, "mail not sent; retrying");
      return;
    }
    queuedHere.delete(mail.id);
    // a crash right here sends the message again once the lease has run out (at least once)
    await markMailSent(db, mail.id, new Date());
    log.info({ mail: id, queued: mail.id, subject: mail.subject }, "mail sent");
  }

  async function pass(onlyFresh?: string[], dueBy?: Date): Promise<void> {
    if (closing && !onlyFresh) return;
    if (!onlyFresh && Date.now() - prunedAt >= Math.min(settings.retentionMs, 3600_000)) {
      prunedAt = Date.now();
      const pruned = await pruneSentMail(db, new Date(Date.now() - settings.retentionMs));
      if (pruned) options.log().debug({ pruned }, "sent mail pruned");
    }
    // one sender to begin with, and one more each time a sender finds work, up to MAIL_SENDERS:
    // they share the queue through their claims
    const senders = new Set<Promise<void>>();
    let failure: unknown;
    const recruit = () => {
      if (senders.size >= MAIL_SENDERS) return;
      const sender: Promise<void> = drain(recruit, onlyFresh, dueBy)
        .catch((error: unknown) => {
          failure ??= error;
        })
        .finally(() => senders.delete(sender));
      senders.add(sender);
    };
    recruit();
    while (senders.size > 0) await Promise.all(senders);
    if (failure) throw failure;
  }

  /** Claims and attempts due messages one after the other until none is left; `recruit` on each find. */
  async function drain(recruit: () => void, onlyFresh?: string[], dueBy?: Date): Promise<void> {
    for (;;) {
      // a closing app finishes the message in hand and leaves the rest to its last pass or to others
      if (closing && !onlyFresh) return;
      const now = new Date();
      const mail = await claimMail(db, dialect, {
        now,
        leaseUntil: new Date(now.getTime() + settings.leaseMs),
        claimer,
        onlyFresh,
        dueBy,
      });
      if (!mail) return;
      recruit();
      await attempt(mail);
    }
  }

  /** Runs a pass after the one under way (at most one waits); then sleeps until the next due message. */
  function requestPass(): Promise<void> {
    if (!nextPass) {
      const run = chain.then(async () => {
        nextPass = undefined;
        await pass();
      });
      nextPass = run;
      chain = run.catch((error) => options.log().error({ err: error }, "mail queue pass failed")).then(schedule);
    }
    return nextPass;
  }

  async function schedule(): Promise<void> {
    if (!loop || closing || nextPass) return;
    let delay = settings.pollIntervalMs;
    try {
      const due = await nextMailDue(db);
      if (due) delay = Math.min(delay, Math.max(10, due.getTime() - Date.now()));
    } catch (error) {
      options.log().error({ err: error }, "mail queue look-up failed");
    }
    if (closing || nextPass) return;
    clearTimeout(timer);
    timer = setTimeout(() => void requestPass(), delay);
    // the loop alone does not keep a process alive
    timer.unref();
  }

  function wake(): void {
    if (loop && started && !closing) void requestPass();
  }

  /**
   * The mail and jobs this app queued and never tried, whatever their due time: a job queues mail
   * of its own, tried in the next round.
   */
  async function passOverOwn(): Promise<void> {
    for (let round = 0; round < 3 && queuedHere.size > 0; round++) {
      const ids = [...queuedHere];
      const dueBy = new Date(Math.max(Date.now(), lastJobDue));
      // a few hundred at a time: the ids are bound parameters, of which either database takes a bounded number
      for (let i = 0; i < ids.length; i += OWN_MAIL_CHUNK) await pass(ids.slice(i, i + OWN_MAIL_CHUNK), dueBy);
    }
  }

  return {
    describe: options.smtpUrl ? redacted(options.smtpUrl) : options.outboxDir,
    async transaction(work) {
      const queued: string[] = [];
      const result = await db.transaction().execute((trx) => work(trx, queuesInto(trx, queued)));
      committed(queued);
      return result;
    },
    async queueJob(kind, request) {
      const id = crypto.randomUUID();
      const now = new Date();
      const delay = loop ? Math.floor(Math.random() * settings.jobDelayMs) : 0;
      const dueAt = new Date(now.getTime() + delay);
      await insertJob(db, { id, kind, request, now, dueAt });
      lastJobDue = Math.max(lastJobDue, dueAt.getTime());
      remember([id]);
      // not wake(): the job waits for its due time, whatever else wakes the loop meanwhile
      if (loop && started && !closing) setTimeout(wake, delay).unref();
    },
    handleJobs(kind, handler) {
      handlers.set(kind, handler);
    },
    renderLinks(renderer) {
      renderLink = renderer;
    },
    start() {
      if (started || closing) return;
      started = true;
      if (loop) void requestPass();
    },
    async idle() {
      if (loop && started && !closing) {
        const wait = lastJobDue - Date.now();
        if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
        return requestPass();
      }
      await chain;
      await passOverOwn();
    },
    async close() {
      closing = true;
      clearTimeout(timer);
      await chain;
      await passOverOwn().catch((error) => options.log().error({ err: error }, "mail queue pass failed"));
      await deliver.close();
    },
  };
}
