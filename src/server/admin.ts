import { generatePassword } from "../contract/passwords.js";
import { buildApp } from "./app.js";
import type { ServerOptions } from "./options.js";
import { createFirstAdmin, recoverAdmin } from "./services/accounts.js";
import type { ServiceContext } from "./services/context.js";
import { migrateToLatest } from "./store/migrations.js";

type InstanceOptions = Pick<ServerOptions, "dataDir" | "databaseUrl" | "secretKey" | "passwordMinLength">;

/** Runs administrative work on the same services a server would build (schema, keys, mail). */
async function withServices<T>(options: InstanceOptions, work: (ctx: ServiceContext) => Promise<T>): Promise<T> {
  const app = await buildApp({ ...options, log: false });
  try {
    return await work(app.services);
  } finally {
    await app.close();
  }
}

/** `server init`: data dir, keys, schema and the first admin (with a one-time password unless one is given). */
export async function initInstance(
  options: InstanceOptions & { adminUser: string; adminEmail?: string; password?: string },
) {
  return withServices(options, async (ctx) => {
    const oneTimePassword = options.password ? undefined : generatePassword();
    const admin = await createFirstAdmin(ctx, {
      userName: options.adminUser,
      email: options.adminEmail,
      password: options.password ?? (oneTimePassword as string),
      temporary: !options.password,
    });
    return { ...admin, dataDir: options.dataDir, database: ctx.store.describe, oneTimePassword };
  });
}

/** `server recover-admin`: an active admin with a one-time password, whatever state the users are in. */
export async function recoverAdminInstance(options: InstanceOptions & { adminUser: string; adminEmail?: string }) {
  return withServices(options, async (ctx) => {
    const oneTimePassword = generatePassword();
    const admin = await recoverAdmin(ctx, {
      userName: options.adminUser,
      email: options.adminEmail,
      password: oneTimePassword,
    });
    return { ...admin, database: ctx.store.describe, oneTimePassword };
  });
}

/** `server migrate`: applies pending schema migrations and names them. */
export async function migrateInstance(options: InstanceOptions) {
  const { openStore } = await import("./store/database.js");
  const store = await openStore(options);
  try {
    return { database: store.describe, applied: await migrateToLatest(store.db, store.dialect) };
  } finally {
    await store.close();
  }
}

/** `server mail-queue`: the queued, sent and given-up messages, without their bodies. */
export async function mailQueueInstance(
  options: InstanceOptions & { status?: "queued" | "sent" | "failed"; limit: number },
) {
  const [{ openStore }, { listMail }] = await Promise.all([
    import("./store/database.js"),
    import("./store/mail-queue-repo.js"),
  ]);
  const store = await openStore(options);
  try {
    await migrateToLatest(store.db, store.dialect);
    const rows = await listMail(store.db, { status: options.status, limit: options.limit });
    return rows.map((row) => ({
      id: row.id,
      status: row.status,
      to: row.recipient,
      subject: row.subject,
      attempts: row.attempts,
      createdAt: row.created_at,
      nextAttemptAt: row.status === "queued" ? row.next_attempt_at : null,
      sentAt: row.sent_at,
      lastError: row.last_error,
    }));
  } finally {
    await store.close();
  }
}

/** `server rotate-key`: see rotateKeys; the keys are where the running servers keep them. */
export async function rotateKeyInstance(
  options: InstanceOptions & { publishSeconds: number; tokenTtlSeconds: number },
) {
  const [{ openStore }, { openKeyStorage }, { rotateKeys }] = await Promise.all([
    import("./store/database.js"),
    import("./services/key-storage.js"),
    import("./services/keys.js"),
  ]);
  const store = await openStore(options);
  try {
    await migrateToLatest(store.db, store.dialect);
    const storage = await openKeyStorage({ store, dataDir: options.dataDir, secretKey: options.secretKey });
    return await rotateKeys(storage, new Date(), options);
  } finally {
    await store.close();
  }
}
