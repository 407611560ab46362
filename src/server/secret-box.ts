import { createCipheriv, createDecipheriv, randomBytes } from "node:crypto";
import { ConfigurationError } from "./configuration-error.js";

const KEY_BYTES = 32;
const IV_BYTES = 12;
const VERSION = "v1";

export const MAKE_SECRET_HINT = "make one with: openssl rand -base64 32";

/** The deployment secret: base64 of exactly 32 bytes (AES-256). */
export function parseSecretKey(text: string): Buffer {
  const trimmed = text.trim();
  const key = Buffer.from(trimmed, "base64");
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(trimmed) || key.length !== KEY_BYTES) {
    throw new ConfigurationError(
      `The secret key must be ${KEY_BYTES} random bytes in base64 (44 characters); ${MAKE_SECRET_HINT}.`,
    );
  }
  return key;
}

/**
 * AES-256-GCM with a fresh IV per message. `context` is bound as additional data, so a sealed
 * value copied to another row (another key id) does not open there.
 */
export function seal(key: Buffer, plaintext: string, context: string): string {
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv("aes-256-gcm", key, iv).setAAD(Buffer.from(context));
  const body = Buffer.concat([cipher.update(plaintext, "utf8"), cipher.final()]);
  const parts = [iv, cipher.getAuthTag(), body].map((part) => part.toString("base64url"));
  return [VERSION, ...parts].join(".");
}

/** Opens what seal() made with the same key and context; undefined for any other key or a tampered value. */
export function unseal(key: Buffer, sealed: string, context: string): string | undefined {
  const [version, iv, tag, body] = sealed.split(".");
  if (version !== VERSION || !iv || !tag || body === undefined) return undefined;
  try {
    const decipher = createDecipheriv("aes-256-gcm", key, Buffer.from(iv, "base64url"))
      .setAAD(Buffer.from(context))
      .setAuthTag(Buffer.from(tag, "base64url"));
    return Buffer.concat([decipher.update(Buffer.from(body, "base64url")), decipher.final()]).toString("utf8");
  } catch {
    return undefined;
  }
}
