import type { FastifyBaseLogger } from "fastify";
import type { Store } from "../store/database.js";
import { insertJob } from "../store/mail-queue-repo.js";
import { attempt, type Delivery } from "./delivery.js";
import { OwnMail } from "./own-mail.js";
import { MAIL_SENDERS, SenderLoop } from "./sender-loop.js";
import { queuesInto } from "./transaction-queues.js";
import { createTransport, describeTransport, type MailTransport } from "./transport.js";
import {
  type JobHandler,
  type JobKind,
  type LinkRenderer,
  MAIL_DEFAULTS,
  type Mailer,
  type MailSettings,
} from "./types.js";

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
        while (Date.now() <= own.lastJobDue) {
          await new Promise((resolve) => setTimeout(resolve, own.lastJobDue - Date.now() + 1));
        }
        // a pass can find less than was asked of it (a timer a millisecond early on the wall clock, a
        // lease another sender held): a few more until this app's jobs and mail have all been tried
        for (let round = 0; round < 3; round++) {
          await senders.requestPass();
          if (own.size === 0) return;
        }
        return;
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
