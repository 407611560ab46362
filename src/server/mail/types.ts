import type { Kysely } from "kysely";
import type { MailKind, Schema } from "../store/schema.js";

/*
 * What the mail module shares with its parts (delivery, sender loop, transport) and with the
 * services: types and defaults only, so that the factory (mailer.ts) imports its parts and
 * none of them imports the factory.
 */

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
