import type { FastifyBaseLogger } from "fastify";
import type { Kysely } from "kysely";
import type { Store } from "../store/database.js";
import { insertJob } from "../store/mail-queue-repo.js";
import type { MailKind, Schema } from "../store/schema.js";
import { attempt, type Delivery } from "./delivery.js";
import { OwnMail } from "./own-mail.js";
import { MAIL_SENDERS, SenderLoop } from "./sender-loop.js";
import { queuesInto } from "./transaction-queues.js";
import { createTransport, describeTransport, type MailTransport } from "./transport.js";

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
  /** how long a claim holds a message; longer than any send can take (the SMTP timeouts of transport.ts) */
  leaseMs?: number;
  /** the loop looks at the queue at least this often (messages other instances left) */
  pollIntervalMs?: number;
  /** sent messages are deleted after this long */
  retentionMs?: number;
  /** without the loop, only the mail this app queued is sent, once, on idle() or as it closes */
  loop?: boolean;
  /** with the loop, a job is due after a random delay of up to this long */
  jobDelayMs?: number;
  /** wraps each send (a span of its own when the server traces) */
  traceSend?: <T>(send: () => Promise<T>) => Promise<T>;
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

/** The options that have a default, resolved. */
export type MailSettings = { [K in keyof typeof MAIL_DEFAULTS]: number };

function settingsOf(options: MailerOptions): MailSettings {
  return {
    retryDelayMs: options.retryDelayMs ?? MAIL_DEFAULTS.retryDelayMs,
    maxRetryDelayMs: options.maxRetryDelayMs ?? MAIL_DEFAULTS.maxRetryDelayMs,
    maxAttempts: options.maxAttempts ?? MAIL_DEFAULTS.maxAttempts,
    leaseMs: options.leaseMs ?? MAIL_DEFAULTS.leaseMs,
    pollIntervalMs: options.pollIntervalMs ?? MAIL_DEFAULTS.pollIntervalMs,
    retentionMs: options.retentionMs ?? MAIL_DEFAULTS.retentionMs,
    jobDelayMs: options.jobDelayMs ?? MAIL_DEFAULTS.jobDelayMs,
  };
}

/**
 * The mail queue and this instance's senders. Messages are rows of `mail_queue`; each sender (up to
 * MAIL_SENDERS at once) claims one due message at a time with a lease, sends it, and marks it sent
 * (at least once: see README).
 */
export function createMailer(options: MailerOptions): Mailer {
  const { db, dialect } = options.store;
  const settings = settingsOf(options);
  const loop = options.loop ?? false;
  const handlers = new Map<JobKind, JobHandler>();
  let renderLink: LinkRenderer | undefined;
  const own = new OwnMail(loop);
  const transport = traced(createTransport(options, loop ? MAIL_SENDERS : undefined), options.traceSend);
  const claimer = crypto.randomUUID();
  const delivery: Delivery = {
    db,
    transport,
    claimer,
    settings,
    log: options.log,
    own,
    handlerOf: (kind) => handlers.get(kind),
    renderer: () => renderLink,
    committed,
  };
  const senders = new SenderLoop({
    db,
    dialect,
    claimer,
    settings,
    loop,
    log: options.log,
    attempt: (mail) => attempt(delivery, mail),
  });

  /** After the commit: the messages are this app's to send on close, and the loop looks at them. */
  function committed(queued: string[]): void {
    own.remember(queued);
    if (queued.length) senders.wake();
  }

  return {
    describe: describeTransport(options),
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
      own.lastJobDue = Math.max(own.lastJobDue, dueAt.getTime());
      own.remember([id]);
      // not wake(): the job waits for its due time, whatever else wakes the loop meanwhile
      if (senders.running) setTimeout(() => senders.wake(), delay).unref();
    },
    handleJobs(kind, handler) {
      handlers.set(kind, handler);
    },
    renderLinks(renderer) {
      renderLink = renderer;
    },
    start() {
      senders.start();
    },
    async idle() {
      if (senders.running) {
        const wait = own.lastJobDue - Date.now();
        if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
        return senders.requestPass();
      }
      await senders.settled();
      await senders.passOverOwn(own);
    },
    async close() {
      await senders.stop();
      await senders.passOverOwn(own).catch((error) => options.log().error({ err: error }, "mail queue pass failed"));
      await transport.close();
    },
  };
}

function traced(transport: MailTransport, trace: MailerOptions["traceSend"]): MailTransport {
  if (!trace) return transport;
  return { send: (message) => trace(() => transport.send(message)), close: () => transport.close() };
}
