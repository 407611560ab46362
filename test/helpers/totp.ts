/**
 * TOTP codes computed independently of the library the server uses: RFC 4648 base32 and RFC 4226
 * HOTP by hand on node:crypto, at RFC 6238's 30-second steps.
 */
import { createHmac } from "node:crypto";

/** RFC 4648 base32, decoded by hand. */
export function base32Bytes(text: string): Buffer {
  const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";
  let bits = 0;
  let value = 0;
  const out: number[] = [];
  for (const char of text.replace(/=+$/, "").toUpperCase()) {
    value = (value << 5) | alphabet.indexOf(char);
    bits += 5;
    if (bits >= 8) {
      out.push((value >>> (bits - 8)) & 255);
      bits -= 8;
    }
  }
  return Buffer.from(out);
}

/** RFC 4226 section 5.3 (HOTP) at the RFC 6238 step of `ms`. */
export function independentCode(key: Buffer, ms: number, digits = 6): string {
  const counter = Buffer.alloc(8);
  counter.writeBigUInt64BE(BigInt(Math.floor(ms / 1000 / 30)));
  const mac = createHmac("sha1", key).update(counter).digest();
  const offset = mac[mac.length - 1]! & 0x0f;
  const binary = mac.readUInt32BE(offset) & 0x7fffffff;
  return String(binary % 10 ** digits).padStart(digits, "0");
}

/** The 6-digit code of a base32 seed at `ms` (now by default). */
export const codeOf = (secret: string, ms = Date.now()) => independentCode(base32Bytes(secret), ms);
