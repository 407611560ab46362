/**
 * RSA-SHA1 (RFC 5849 section 3.4.3): a consumer registers an RSA public key and signs the base
 * string with its private key, as Atlassian application links and many enterprise integrations do.
 */
import { createPublicKey, type KeyObject, verify } from "node:crypto";
import { invalid } from "../problem-error.js";

/** Smaller RSA keys are refused (NIST SP 800-131A). */
export const RSA_MIN_BITS = 2048;
const PEM_MAX_CHARS = 16_384;

function parse(pem: string): KeyObject | undefined {
  try {
    return createPublicKey({ key: pem, format: "pem" });
  } catch {
    return undefined;
  }
}

/** A consumer's `publicKey`, when given: a PEM RSA public key (SPKI or PKCS#1) of at least 2048 bits. */
export function assertPublicKey(pem: unknown): void {
  if (pem === undefined) return;
  const path = "/publicKey";
  if (typeof pem !== "string" || pem.length > PEM_MAX_CHARS) {
    throw invalid(`publicKey must be a PEM text of at most ${PEM_MAX_CHARS} characters.`, path, "invalidValue");
  }
  const key = parse(pem);
  if (!key) throw invalid("publicKey is not a PEM public key ('-----BEGIN PUBLIC KEY-----').", path, "invalidValue");
  if (key.asymmetricKeyType !== "rsa") {
    throw invalid(`publicKey must be an RSA key, not ${key.asymmetricKeyType}.`, path, "invalidValue");
  }
  const bits = key.asymmetricKeyDetails?.modulusLength ?? 0;
  if (bits < RSA_MIN_BITS) {
    throw invalid(`publicKey has ${bits} bits; RSA-SHA1 needs at least ${RSA_MIN_BITS}.`, path, "invalidValue");
  }
}

/** Whether `signature` (base64, as sent) is the RSASSA-PKCS1-v1_5 SHA-1 signature of `baseString`. */
export function verifyRsaSha1(baseString: string, publicKeyPem: string, signature: string): boolean {
  const key = parse(publicKeyPem);
  if (!key || !/^[A-Za-z0-9+/]+={0,2}$/.test(signature)) return false;
  return verify("RSA-SHA1", Buffer.from(baseString, "utf8"), key, Buffer.from(signature, "base64"));
}
