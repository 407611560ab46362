import { randomBytes } from "node:crypto";
import { v7 as uuidv7 } from "uuid";

/**
 * A secret or identifier of `bytes` random bytes, in hex: safe in URLs, shells and command lines
 * (base64url may begin with '-', which a command line reads as an option).
 */
export function randomToken(bytes: number): string {
  return randomBytes(bytes).toString("hex");
}

/**
 * The id of a resource made at `time`: a UUID of version 7 (RFC 9562), its millisecond first and
 * 74 random bits after. The B-trees keyed by a resource's id (its row, its values, its
 * credential) take the ids of an import at their end, where random ones dirtied a page anywhere
 * in them for every User, the more so the larger the directory (users import at 100,000: 2.0x on
 * SQLite).
 */
export function resourceId(time: Date): string {
  return uuidv7({ msecs: time.getTime() });
}
