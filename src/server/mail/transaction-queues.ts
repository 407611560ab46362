import type { Kysely } from "kysely";
import { insertLinkMail, insertMail } from "../store/mail-queue-repo.js";
import type { Schema } from "../store/schema.js";
import type { Queues } from "./types.js";

/**
 * The queues of a transaction: each message or link becomes a row of mail_queue written with
 * `trx`, so that it commits or rolls back with the change that causes it; `queued` collects
 * their ids, for the sender to look at once the transaction has committed.
 */
export function queuesInto(trx: Kysely<Schema>, queued: string[]): Queues {
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
