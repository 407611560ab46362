import type { FastifyBaseLogger } from "fastify";
import type { Kysely } from "kysely";
import { claimMail, nextMailDue, pruneSentMail, type QueuedMail } from "../store/mail-queue-repo.js";
import type { Schema } from "../store/schema.js";
import type { OwnMail } from "./own-mail.js";
import type { MailSettings } from "./types.js";

/**
 * Messages a sender loop has in hand at once, each on its own pooled SMTP connection. One at a time,
 * a message's round trips (claim, SMTP dialogue, mark sent) left both the database and the SMTP
 * server idle most of the time: 10 000 invitations took half an hour to leave.
 */
export const MAIL_SENDERS = 4;

/** How many of its own messages a closing app looks for at once (its last pass). */
const OWN_MAIL_CHUNK = 500;

export interface SenderLoopOptions {
  db: Kysely<Schema>;
  dialect: "sqlite" | "postgres";
  /** this sender's name on the rows it claims */
  claimer: string;
  settings: Pick<MailSettings, "leaseMs" | "pollIntervalMs" | "retentionMs">;
  /** whether passes follow each other (a server) or run only when asked (the embedded CLI) */
  loop: boolean;
  log: () => FastifyBaseLogger;
  attempt(mail: QueuedMail): Promise<void>;
}

/**
 * This instance's senders. A pass claims due rows one at a time with a lease and attempts them,
 * with up to MAIL_SENDERS senders at once; with the loop, the next pass runs when the next row is
 * due, when this app queues mail, or every pollIntervalMs (rows other instances left).
 */
export class SenderLoop {
  private closing = false;
  private started = false;
  private timer: NodeJS.Timeout | undefined;
  private chain: Promise<void> = Promise.resolve();
  private nextPass: Promise<void> | undefined;
  private prunedAt = 0;

  constructor(private readonly options: SenderLoopOptions) {}

  /** Whether the loop runs: started, and not closing. */
  get running(): boolean {
    return this.options.loop && this.started && !this.closing;
  }

  start(): void {
    if (this.started || this.closing) return;
    this.started = true;
    if (this.options.loop) void this.requestPass();
  }

  /** Looks at the queue soon: this app queued something. */
  wake(): void {
    if (this.running) void this.requestPass();
  }

  /** The pass under way, if any, and the ones asked for before this call. */
  settled(): Promise<void> {
    return this.chain;
  }

  /** Stops the loop without waiting for any retry; the pass under way finishes its message in hand. */
  async stop(): Promise<void> {
    this.closing = true;
    clearTimeout(this.timer);
    await this.chain;
  }

  /** Runs a pass after the one under way (at most one waits); then sleeps until the next due message. */
  requestPass(): Promise<void> {
    if (!this.nextPass) {
      const run = this.chain.then(async () => {
        this.nextPass = undefined;
        await this.pass();
      });
      this.nextPass = run;
      this.chain = run
        .catch((error) => this.options.log().error({ err: error }, "mail queue pass failed"))
        .then(() => this.schedule());
    }
    return this.nextPass;
  }

  /**
   * The mail and jobs this app queued and never tried, whatever their due time: a job queues mail
   * of its own, tried in the next round.
   */
  async passOverOwn(own: OwnMail): Promise<void> {
    for (let round = 0; round < 3 && own.size > 0; round++) {
      const ids = own.list();
      const dueBy = new Date(Math.max(Date.now(), own.lastJobDue));
      // a few hundred at a time: the ids are bound parameters, of which either database takes a bounded number
      for (let i = 0; i < ids.length; i += OWN_MAIL_CHUNK) await this.pass(ids.slice(i, i + OWN_MAIL_CHUNK), dueBy);
    }
  }

  private async pass(onlyFresh?: string[], dueBy?: Date): Promise<void> {
    if (this.closing && !onlyFresh) return;
    if (!onlyFresh) await this.pruneNowAndThen();
    // one sender to begin with, and one more each time a sender finds work, up to MAIL_SENDERS:
    // they share the queue through their claims
    const senders = new Set<Promise<void>>();
    let failure: unknown;
    const recruit = () => {
      if (senders.size >= MAIL_SENDERS) return;
      const sender: Promise<void> = this.drain(recruit, onlyFresh, dueBy)
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

  /** Sent messages past retention go, at most once an hour. */
  private async pruneNowAndThen(): Promise<void> {
    const { retentionMs } = this.options.settings;
    if (Date.now() - this.prunedAt < Math.min(retentionMs, 3600_000)) return;
    this.prunedAt = Date.now();
    const pruned = await pruneSentMail(this.options.db, new Date(Date.now() - retentionMs));
    if (pruned) this.options.log().debug({ pruned }, "sent mail pruned");
  }

  /** Claims and attempts due messages one after the other until none is left; `recruit` on each find. */
  private async drain(recruit: () => void, onlyFresh?: string[], dueBy?: Date): Promise<void> {
    const { db, dialect, claimer, settings } = this.options;
    for (;;) {
      // a closing app finishes the message in hand and leaves the rest to its last pass or to others
      if (this.closing && !onlyFresh) return;
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
      await this.options.attempt(mail);
    }
  }

  private async schedule(): Promise<void> {
    if (!this.options.loop || this.closing || this.nextPass) return;
    let delay = this.options.settings.pollIntervalMs;
    try {
      const due = await nextMailDue(this.options.db);
      if (due) delay = Math.min(delay, Math.max(10, due.getTime() - Date.now()));
    } catch (error) {
      this.options.log().error({ err: error }, "mail queue look-up failed");
    }
    if (this.closing || this.nextPass) return;
    clearTimeout(this.timer);
    this.timer = setTimeout(() => void this.requestPass(), delay);
    // the loop alone does not keep a process alive
    this.timer.unref();
  }
}
