import { chmodSync, linkSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { JWK } from "jose";
import { ConfigurationError } from "../configuration-error.js";
import { MAKE_SECRET_HINT, parseSecretKey, seal, unseal } from "../secret-box.js";
import type { Store } from "../store/database.js";
import { deleteSigningKey, insertSigningKey, listSigningKeys } from "../store/signing-keys-repo.js";

export interface StoredKey {
  kid: string;
  createdAt: string;
  /** the key signs from this instant on; before, it is only published (rotation) */
  signFrom: string;
  privateJwk: JWK;
}

/** Where the signing keys of an installation live: files in its data dir, or rows in its database. */
export interface KeyStorage {
  /** for messages: which of the two */
  readonly describe: string;
  list(): Promise<StoredKey[]>;
  add(key: StoredKey): Promise<void>;
  remove(kid: string): Promise<void>;
}

/** One 0600 JSON file per key in `<data-dir>/keys`: a single instance, or SQLite without a secret. */
export function fileKeyStorage(keysDir: string): KeyStorage {
  const files = () => {
    try {
      return readdirSync(keysDir).filter((f) => f.endsWith(".json"));
    } catch {
      return [];
    }
  };
  return {
    describe: `files in ${keysDir}`,
    async list() {
      return files().map((file) => JSON.parse(readFileSync(join(keysDir, file), "utf8")) as StoredKey);
    },
    async add(key) {
      mkdirSync(keysDir, { recursive: true, mode: 0o700 });
      const file = join(keysDir, `${key.kid}.json`);
      // written aside, then linked into place whole: another process listing the keys meanwhile
      // (two `server init` at once) would otherwise read a file created but still empty
      const partial = `${file}.${process.pid}.partial`;
      writeFileSync(partial, JSON.stringify(key), { mode: 0o600, flag: "wx" });
      try {
        chmodSync(partial, 0o600);
        linkSync(partial, file);
      } finally {
        rmSync(partial, { force: true });
      }
    },
    async remove(kid) {
      rmSync(join(keysDir, `${kid}.json`), { force: true });
    },
  };
}

/**
 * Rows of the database, the private half sealed under the deployment secret, so that every
 * instance signs and verifies with the same keys and a copy of the database alone signs nothing.
 */
export function databaseKeyStorage(store: Store, secret: Buffer): KeyStorage {
  return {
    describe: "the database (sealed under the secret key)",
    async list() {
      return (await listSigningKeys(store.db)).map((row) => {
        const opened = unseal(secret, row.sealed_private_jwk, row.kid);
        if (opened === undefined) {
          throw new ConfigurationError(
            `The secret key does not open the signing key ${row.kid} kept in the database: every instance must be given the deployment's own secret (BIZCTL_SECRET_KEY or --secret-key-file).`,
          );
        }
        return { kid: row.kid, createdAt: row.created_at, signFrom: row.sign_from, privateJwk: JSON.parse(opened) };
      });
    },
    async add(key) {
      await insertSigningKey(store.db, {
        kid: key.kid,
        created_at: key.createdAt,
        sign_from: key.signFrom,
        sealed_private_jwk: seal(secret, JSON.stringify(key.privateJwk), key.kid),
      });
    },
    async remove(kid) {
      await deleteSigningKey(store.db, kid);
    },
  };
}

export interface KeyStorageOptions {
  store: Store;
  dataDir: string;
  /** the deployment secret, base64 of 32 bytes */
  secretKey?: string;
}

/**
 * Chooses where the keys live. With a secret: the database, taking over the key files of an
 * installation that had none before (its tokens stay valid). Without one: the data dir's files,
 * which several instances cannot share, so PostgreSQL (the multi-instance database) refuses.
 */
export async function openKeyStorage(options: KeyStorageOptions): Promise<KeyStorage> {
  const files = fileKeyStorage(join(options.dataDir, "keys"));
  if (options.secretKey === undefined) {
    if (options.store.dialect === "postgres") {
      throw new ConfigurationError(
        `On PostgreSQL the signing keys live in the database, sealed under a secret that every instance shares: set BIZCTL_SECRET_KEY or pass --secret-key-file FILE (${MAKE_SECRET_HINT}).`,
      );
    }
    if ((await listSigningKeys(options.store.db)).length > 0) {
      throw new ConfigurationError(
        "This installation keeps its signing keys in the database, sealed under a secret key: set BIZCTL_SECRET_KEY or pass --secret-key-file FILE.",
      );
    }
    return files;
  }
  const database = databaseKeyStorage(options.store, parseSecretKey(options.secretKey));
  if ((await listSigningKeys(options.store.db)).length === 0) {
    for (const key of await files.list()) await database.add(key);
  }
  return database;
}
