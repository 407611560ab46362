import { randomBytes } from "node:crypto";

/**
 * A secret or identifier of `bytes` random bytes, in hex: safe in URLs, shells and command lines
 * (base64url may begin with '-', which a command line reads as an option).
 */
export function randomToken(bytes: number): string {
  return randomBytes(bytes).toString("hex");
}
