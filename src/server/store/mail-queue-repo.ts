import type { ExpressionBuilder, Kysely } from "kysely";
import type { MailKind, MailQueueTable, Schema } from "./schema.js";

export type QueuedMail = MailQueueTable;

export async function insertMail(
  db: Kysely<Schema>,
  mail: { id: string; recipient: string; subject: string; text: string; html: string; now: Date },
): Promise<void> {
  await insertRow(db, { ...mail, kind: "message", dueAt: mail.now });
}

/** A message whose single-use link the sender makes as it sends; `content` (JSON) says what else it holds. */
export async function insertLinkMail(
  db: Kysely<Schema>,
  mail: { id: string; recipient: string; subject: string; content: object; now: Date },
): Promise<void> {
  await insertRow(db, {
    id: mail.id,
    kind: "link",
    recipient: mail.recipient,
    subject: mail.subject,
    text: JSON.stringify(mail.content),
    html: "",
    now: mail.now,
    dueAt: mail.now,
  });
}

/** A job for the sender (see MailKind), due at `dueAt`; its request is kept as JSON in body_text. */
export async function insertJob(
  db: Kysely<Schema>,
  job: { id: string; kind: Exclude<MailKind, "message" | "link">; request: object; now: Date; dueAt: Date },
): Promise<void> {
  await insertRow(db, {
    id: job.id,
    kind: job.kind,
    recipient: "",
    subject: job.kind,
    text: JSON.stringify(job.request),
    html: "",
    now: job.now,
    dueAt: job.dueAt,
  });
}

async function insertRow(
  db: Kysely<Schema>,
  row: {
    id: string;
    kind: MailKind;
    recipient: string;
    subject: string;
    text: string;
    html: string;
    now: Date;
    dueAt: Date;
  },
): Promise<void> {
  const now = row.now.toISOString();
  await db
    .insertInto("mail_queue")
    .values({
      id: row.id,
      kind: row.kind,
      recipient: row.recipient,
      subject: row.subject,
      body_text: row.text,
      body_html: row.html,
      status: "queued",
      attempts: 0,
      next_attempt_at: row.dueAt.toISOString(),
      claimed_until: null,
      claimed_by: null,
      last_error: null,
      created_at: now,
      sent_at: null,
    })
    .execute();
}

export interface ClaimOptions {
  now: Date;
  leaseUntil: Date;
  /** the instance that takes the lease */
  claimer: string;
  /** only these messages, and only those never tried yet (the last pass of a closing app) */
  onlyFresh?: string[];
  /** what is due by then counts as due (default `now`): a closing app does its own delayed jobs at once */
  dueBy?: Date;
}

function claimable(eb: ExpressionBuilder<Schema, "mail_queue">, options: ClaimOptions) {
  const now = options.now.toISOString();
  const conditions = [
    eb("status", "=", "queued"),
    eb("next_attempt_at", "<=", (options.dueBy ?? options.now).toISOString()),
    eb.or([eb("claimed_until", "is", null), eb("claimed_until", "<", now)]),
  ];
  if (options.onlyFresh) {
    conditions.push(eb("id", "in", options.onlyFresh), eb("attempts", "=", 0));
  }
  return eb.and(conditions);
}

/**
 * Takes a lease on the oldest due message nobody holds and counts the attempt; undefined when
 * there is none. Two senders never get the same message while a lease runs: on SQLite the
 * single UPDATE re-checks the lease under the database's write lock; on PostgreSQL the candidate
 * row is locked with FOR UPDATE SKIP LOCKED, so concurrent senders take different rows.
 */
export async function claimMail(
  db: Kysely<Schema>,
  dialect: "sqlite" | "postgres",
  options: ClaimOptions,
): Promise<QueuedMail | undefined> {
  if (options.onlyFresh?.length === 0) return undefined;
  const lease = {
    claimed_until: options.leaseUntil.toISOString(),
    claimed_by: options.claimer,
  };
  if (dialect === "postgres") {
    return db.transaction().execute(async (trx) => {
      const candidate = await trx
        .selectFrom("mail_queue")
        .select("id")
        .where((eb) => claimable(eb, options))
        .orderBy("next_attempt_at")
        .limit(1)
        .forUpdate()
        .skipLocked()
        .executeTakeFirst();
      if (!candidate) return undefined;
      return trx
        .updateTable("mail_queue")
        .set((eb) => ({ ...lease, attempts: eb("attempts", "+", 1) }))
        .where("id", "=", candidate.id)
        .returningAll()
        .executeTakeFirst();
    });
  }
  return db
    .updateTable("mail_queue")
    .set((eb) => ({ ...lease, attempts: eb("attempts", "+", 1) }))
    .where("id", "=", (eb) =>
      eb
        .selectFrom("mail_queue")
        .select("id")
        .where((inner) => claimable(inner, options))
        .orderBy("next_attempt_at")
        .limit(1),
    )
    .where((eb) => claimable(eb, options))
    .returningAll()
    .executeTakeFirst();
}

/** The job is done: its row goes, if this sender still holds it (false: another took it over). */
export async function deleteClaimedJob(db: Kysely<Schema>, id: string, claimer: string): Promise<boolean> {
  const result = await db
    .deleteFrom("mail_queue")
    .where("id", "=", id)
    .where("status", "=", "queued")
    .where("claimed_by", "=", claimer)
    .executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}

/**
 * SMTP accepted the message (or the outbox file is written): it is done, whoever holds the lease
 * now. The body goes, so that the reset link it carries does not outlive its sending.
 */
export async function markMailSent(db: Kysely<Schema>, id: string, now: Date): Promise<void> {
  await db
    .updateTable("mail_queue")
    .set({
      status: "sent",
      sent_at: now.toISOString(),
      body_text: null,
      body_html: null,
      claimed_until: null,
      claimed_by: null,
    })
    .where("id", "=", id)
    .where("status", "=", "queued")
    .execute();
}

/** The attempt failed: the lease is given back and the message is due again at `nextAttemptAt`. */
export async function markMailRetry(
  db: Kysely<Schema>,
  id: string,
  claimer: string,
  failure: { error: string; nextAttemptAt: Date },
): Promise<void> {
  await db
    .updateTable("mail_queue")
    .set({
      next_attempt_at: failure.nextAttemptAt.toISOString(),
      last_error: failure.error,
      claimed_until: null,
      claimed_by: null,
    })
    .where("id", "=", id)
    .where("status", "=", "queued")
    .where("claimed_by", "=", claimer)
    .execute();
}

/** Given up after the last attempt: kept, with its error, for operators; the body goes as on success. */
export async function markMailFailed(
  db: Kysely<Schema>,
  id: string,
  claimer: string,
  failure: { error: string },
): Promise<void> {
  await db
    .updateTable("mail_queue")
    .set({
      status: "failed",
      last_error: failure.error,
      body_text: null,
      body_html: null,
      claimed_until: null,
      claimed_by: null,
    })
    .where("id", "=", id)
    .where("status", "=", "queued")
    .where("claimed_by", "=", claimer)
    .execute();
}

/** When the next queued message may be claimed (its due time, or the end of a lease another sender holds). */
export async function nextMailDue(db: Kysely<Schema>): Promise<Date | undefined> {
  const rows = await db
    .selectFrom("mail_queue")
    .select(["next_attempt_at", "claimed_until"])
    .where("status", "=", "queued")
    .orderBy("next_attempt_at")
    .limit(50)
    .execute();
  let next: string | undefined;
  for (const row of rows) {
    const at = row.claimed_until && row.claimed_until > row.next_attempt_at ? row.claimed_until : row.next_attempt_at;
    if (next === undefined || at < next) next = at;
  }
  return next === undefined ? undefined : new Date(next);
}

/** Deletes messages sent before `before`; failed ones stay for operators. Returns how many went. */
export async function pruneSentMail(db: Kysely<Schema>, before: Date): Promise<number> {
  const result = await db
    .deleteFrom("mail_queue")
    .where("status", "=", "sent")
    .where("sent_at", "<", before.toISOString())
    .executeTakeFirst();
  return Number(result.numDeletedRows);
}

/** The messages of the queue for operators, oldest first, without the bodies. */
export async function listMail(db: Kysely<Schema>, filter: { status?: QueuedMail["status"]; limit: number }) {
  let query = db
    .selectFrom("mail_queue")
    .select([
      "id",
      "status",
      "recipient",
      "subject",
      "attempts",
      "created_at",
      "next_attempt_at",
      "sent_at",
      "last_error",
    ])
    // jobs are work in progress, not mail: they last until the sender's next pass
    .where("kind", "in", ["message", "link"])
    .orderBy("created_at")
    .orderBy("id")
    .limit(filter.limit);
  if (filter.status) query = query.where("status", "=", filter.status);
  return query.execute();
}

/** The messages waiting to be sent, and when the oldest of them was queued (metrics). */
export async function queueState(db: Kysely<Schema>): Promise<{ depth: number; oldest: string | null }> {
  const row = await db
    .selectFrom("mail_queue")
    .select((eb) => [eb.fn.countAll().as("depth"), eb.fn.min("created_at").as("oldest")])
    .where("status", "=", "queued")
    .executeTakeFirst();
  return { depth: Number(row?.depth ?? 0), oldest: (row?.oldest as string | null | undefined) ?? null };
}
