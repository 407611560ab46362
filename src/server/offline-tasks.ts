/**
 * The `server` commands that work on a data dir or a database with no server running: init,
 * recover-admin, migrate, mail-queue, rotate-key and backup. Each opens what it needs and closes
 * it whatever happens.
 */
import { randomBytes } from "node:crypto";
import { existsSync } from "node:fs";
import { link, open, rename, rm, stat } from "node:fs/promises";
import { basename, dirname, join, resolve } from "node:path";
import { generatePassword } from "../contract/passwords.js";
import { buildApp } from "./app.js";
import { ConfigurationError } from "./configuration-error.js";
import type { ServerOptions } from "./options.js";
import { createFirstAdmin, recoverAdmin } from "./services/first-admin.js";
import type { ServiceContext } from "./services/service-context.js";
import type { Store, StoreOptions } from "./store/database.js";
import { migrateToLatest } from "./store/migrator.js";

type InstanceOptions = Pick<ServerOptions, "dataDir" | "databaseUrl" | "secretKey" | "passwordMinLength">;

/** Runs administrative work on the database alone (no keys, no mail), closing it whatever happens. */
async function withStore<T>(options: StoreOptions, work: (store: Store) => Promise<T>): Promise<T> {
  const { openStore } = await import("./store/database.js");
  const store = await openStore(options);
  try {
    return await work(store);
  } finally {
    await store.close();
  }
}

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
  return withStore(options, async (store) => ({
    database: store.describe,
    applied: await migrateToLatest(store.db, store.dialect),
  }));
}

/** `server mail-queue`: the queued, sent and given-up messages, without their bodies. */
export async function mailQueueInstance(
  options: InstanceOptions & { status?: "queued" | "sent" | "failed"; limit: number },
) {
  const { listMail } = await import("./store/mail-queue-repo.js");
  return withStore(options, async (store) => {
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
  });
}

/** `server rotate-key`: see rotateKeys; the keys are where the running servers keep them. */
export async function rotateKeyInstance(
  options: InstanceOptions & { publishSeconds: number; tokenTtlSeconds: number },
) {
  const [{ openKeyStorage }, { rotateKeys }] = await Promise.all([
    import("./services/key-storage.js"),
    import("./services/keys.js"),
  ]);
  return withStore(options, async (store) => {
    await migrateToLatest(store.db, store.dialect);
    const storage = await openKeyStorage({ store, dataDir: options.dataDir, secretKey: options.secretKey });
    const rotated = await rotateKeys(storage, new Date(), options);
    // after the fact: the keys may live in files, outside any transaction of the database
    const { audit } = await import("./services/audit.js");
    await audit({ clock: () => new Date() }, store.db, {
      action: "key.rotate",
      target: { type: "SigningKey", id: rotated.kid },
      details: { via: "server rotate-key", signFrom: rotated.signFrom, removed: rotated.removed },
    });
    return rotated;
  });
}

/** What `server backup` refuses on PostgreSQL, with the tool to use instead. */
const PG_DUMP_HINT =
  "back up PostgreSQL with pg_dump, e.g. pg_dump --format=custom --file=bizctl.dump postgres://bizctl@db/bizctl";

/**
 * `server backup`: a consistent copy of a SQLite database, safe while servers write to it. The copy
 * is made in a 0600 file beside FILE and moved into place only when complete, so FILE is never a
 * half-written database; without `force` an existing FILE is refused (EEXIST), even one that
 * appears while the copy runs.
 */
export async function backupInstance(options: InstanceOptions & { file: string; force: boolean }) {
  const { listSigningKeys } = await import("./store/signing-keys-repo.js");
  return withStore({ ...options, mustExist: true }, async (store) => {
    if (!store.backup) {
      throw new ConfigurationError(`server backup copies SQLite databases only: ${PG_DUMP_HINT}.`);
    }
    const target = resolve(options.file);
    // with --force a rename over the live file would swap the database under running servers,
    // whose later writes would go to the unlinked original and be lost
    if (await sameFile(target, store.describe)) {
      throw new ConfigurationError(`${target} is the database being backed up: choose another file.`);
    }
    const temporary = join(dirname(target), `.${basename(target)}.${randomBytes(6).toString("hex")}.tmp`);
    // created empty and 0600 before SQLite writes into it: the copy holds password hashes and
    // sessions, and a file SQLite creates itself follows the umask
    await (await open(temporary, "wx", 0o600)).close();
    let pages: number;
    try {
      ({ pages } = await store.backup(temporary));
      const copy = await open(temporary, "r+");
      try {
        await copy.sync();
      } finally {
        await copy.close();
      }
      if (options.force) await rename(temporary, target);
      else await placeUnlessExists(temporary, target);
    } finally {
      await rm(temporary, { force: true });
      // what SQLite may leave beside a copy that failed half-way
      for (const suffix of ["-journal", "-wal", "-shm"]) await rm(`${temporary}${suffix}`, { force: true });
    }
    await syncDirectory(dirname(target));
    let keysInDatabase = false;
    try {
      keysInDatabase = (await listSigningKeys(store.db)).length > 0;
    } catch {
      // a database from before shared keys has no signing_keys table: its keys are files
    }
    return {
      file: target,
      size: (await stat(target)).size,
      pages,
      database: store.describe,
      signingKeys: keysInDatabase ? ("database" as const) : ("files" as const),
      ...(!keysInDatabase && { keysDir: join(resolve(options.dataDir), "keys") }),
    };
  });
}

/**
 * A hard link refuses an existing target atomically, where a check followed by a rename would
 * replace a file that appeared in between; file systems without hard links get the check.
 */
async function placeUnlessExists(temporary: string, target: string): Promise<void> {
  try {
    await link(temporary, target);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code !== "EPERM" && code !== "ENOTSUP" && code !== "EOPNOTSUPP") throw error;
    if (existsSync(target)) {
      throw Object.assign(new Error(`${target} exists`), { code: "EEXIST" });
    }
    await rename(temporary, target);
  }
}

async function sameFile(a: string, b: string): Promise<boolean> {
  const [one, other] = await Promise.all([stat(a).catch(() => undefined), stat(b).catch(() => undefined)]);
  return one !== undefined && other !== undefined && one.dev === other.dev && one.ino === other.ino;
}

/** A rename is durable once its directory is on disk; some systems cannot open a directory. */
async function syncDirectory(directory: string): Promise<void> {
  try {
    const handle = await open(directory, "r");
    try {
      await handle.sync();
    } finally {
      await handle.close();
    }
  } catch {
    // best effort: the file itself is synced
  }
}
