import { randomBytes } from "node:crypto";
import { chmodSync, linkSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";
import { parseSecretKey, seal, unseal } from "../secret-box.js";

/**
 * Seals the secrets the server must read back (TOTP seeds) with the deployment secret, as the
 * signing keys kept in the database are sealed (secret-box.ts), so that a copy of the database,
 * its WAL or a dump alone opens none of them.
 */
export interface Sealer {
  seal(plaintext: string, context: string): string;
  /** undefined when no key this server holds opens it (another deployment's secret, or tampered) */
  unseal(sealed: string, context: string): string | undefined;
}

/**
 * The sealer of an installation: under its deployment secret when it has one (required on
 * PostgreSQL); otherwise (SQLite without a secret, the embedded default) under a random key kept
 * in a 0600 file of the data dir, beside the signing key files, made when first needed. A value
 * sealed under that file key still opens after a secret is configured later.
 */
export function openSealer(options: { secretKey?: string; keyFile: string }): Sealer {
  const secret = options.secretKey === undefined ? undefined : parseSecretKey(options.secretKey);
  let fileKey: Buffer | undefined;
  const readFileKey = (): Buffer | undefined => {
    if (fileKey) return fileKey;
    try {
      fileKey = parseSecretKey(readFileSync(options.keyFile, "utf8"));
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
    }
    return fileKey;
  };
  const sealingKey = (): Buffer => {
    if (secret) return secret;
    const existing = readFileKey();
    if (existing) return existing;
    mkdirSync(dirname(options.keyFile), { recursive: true, mode: 0o700 });
    // written aside, then linked into place whole: of two processes making it at once, the second
    // reads the first's, never a file created but still empty
    const partial = `${options.keyFile}.${process.pid}.partial`;
    writeFileSync(partial, randomBytes(32).toString("base64"), { mode: 0o600, flag: "wx" });
    try {
      chmodSync(partial, 0o600);
      linkSync(partial, options.keyFile);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
    } finally {
      rmSync(partial, { force: true });
    }
    return readFileKey()!;
  };
  return {
    seal: (plaintext, context) => seal(sealingKey(), plaintext, context),
    unseal(sealed, context) {
      const keys = [secret, readFileKey()].filter((key): key is Buffer => key !== undefined);
      for (const key of keys) {
        const opened = unseal(key, sealed, context);
        if (opened !== undefined) return opened;
      }
      return undefined;
    },
  };
}
