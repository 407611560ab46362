import type { FastifyBaseLogger } from "fastify";
import type { Kysely } from "kysely";
import {
  deleteClaimedJob,
  markMailFailed,
  markMailRetry,
  markMailSent,
  type QueuedMail,
} from "../store/mail-queue-repo.js";
import type { Schema } from "../store/schema.js";
import type { OwnMail } from "./own-mail.js";
import { queuesInto } from "./transaction-queues.js";
import type { MailTransport } from "./transport.js";
import type { JobHandler, JobKind, LinkRenderer, MailMessage, MailSettings } from "./types.js";

// One attempt at a claimed row of the queue: a job done, a message sent, or why not recorded on the row.

export interface Delivery {
  db: Kysely<Schema>;
  transport: MailTransport;
  /** this sender's name on the rows it claims */
  claimer: string;
  settings: Pick<MailSettings, "retryDelayMs" | "maxRetryDelayMs" | "maxAttempts">;
  log: () => FastifyBaseLogger;
  own: OwnMail;
  handlerOf(kind: JobKind): JobHandler | undefined;
  renderer(): LinkRenderer | undefined;
  /** after a job's commit, with the ids of the mail it queued */
  committed(queued: string[]): void;
}

/** What went wrong, short and without the message: it is kept in the queue and logged. */
function describeError(error: unknown): string {
  const text = error instanceof Error ? error.message : String(error);
  return text.replace(/\s+/g, " ").slice(0, 500);
}

/** The wait before the next attempt: retryDelayMs, twice as long after each further failure, up to maxRetryDelayMs. */
function retryDelay(settings: Delivery["settings"], attempts: number): number {
  return Math.min(settings.retryDelayMs * 2 ** Math.max(0, attempts - 1), settings.maxRetryDelayMs);
}

/** The message of a claimed row: as queued, or, for a link, made now; undefined for a void link. */
async function messageOf(delivery: Delivery, mail: QueuedMail): Promise<MailMessage | undefined> {
  if (mail.kind === "message") {
    return { to: mail.recipient, subject: mail.subject, text: mail.body_text ?? "", html: mail.body_html ?? "" };
  }
  const render = delivery.renderer();
  if (!render) throw new Error("no renderer for queued links");
  return delivery.db.transaction().execute((trx) => render(trx, mail.id, JSON.parse(mail.body_text ?? "null")));
}

/** Does a job and deletes it in one transaction; the mail it queues is sent like any other. */
async function runJob(delivery: Delivery, mail: QueuedMail): Promise<void> {
  const handler = delivery.handlerOf(mail.kind as JobKind);
  if (!handler) throw new Error(`no handler for the job kind ${mail.kind}`);
  const queued: string[] = [];
  await delivery.db.transaction().execute(async (trx) => {
    // the lease ran out and another sender took the job over: it is theirs
    if (!(await deleteClaimedJob(trx, mail.id, delivery.claimer))) return;
    await handler(trx, JSON.parse(mail.body_text ?? "null"), queuesInto(trx, queued));
  });
  delivery.committed(queued);
}

/** A failed attempt: retried later with a longer wait, or given up after maxAttempts. */
async function failed(delivery: Delivery, mail: QueuedMail, error: unknown, log: FastifyBaseLogger): Promise<void> {
  const { db, claimer, settings } = delivery;
  const reason = describeError(error);
  if (mail.attempts >= settings.maxAttempts) {
    await markMailFailed(db, mail.id, claimer, { error: reason });
    log.error({ err: error, mail: mail.id, attempts: mail.attempts }, "mail not sent; giving up");
    return;
  }
  const nextAttemptAt = new Date(Date.now() + retryDelay(settings, mail.attempts));
  await markMailRetry(db, mail.id, claimer, { error: reason, nextAttemptAt });
  log.warn({ err: error, mail: mail.id, attempt: mail.attempts, nextAttemptAt }, "mail not sent; retrying");
}

export async function attempt(delivery: Delivery, mail: QueuedMail): Promise<void> {
  const { db, claimer, own } = delivery;
  const log = delivery.log();
  let id: string;
  try {
    if (mail.kind !== "message" && mail.kind !== "link") {
      await runJob(delivery, mail);
      own.forget(mail.id);
      return;
    }
    const message = await messageOf(delivery, mail);
    if (!message) {
      own.forget(mail.id);
      await markMailFailed(db, mail.id, claimer, { error: "not sent: its link was used or voided before it left" });
      log.info({ queued: mail.id, subject: mail.subject }, "mail not sent: its link is void");
      return;
    }
    id = await delivery.transport.send(message);
  } catch (error) {
    own.forget(mail.id);
    await failed(delivery, mail, error, log);
    return;
  }
  own.forget(mail.id);
  // a crash right here sends the message again once the lease has run out (at least once)
  await markMailSent(db, mail.id, new Date());
  log.info({ mail: id, queued: mail.id, subject: mail.subject }, "mail sent");
}
