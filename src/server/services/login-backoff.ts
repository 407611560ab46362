import { createHash } from "node:crypto";
import { type BackOff, backedOffUntil, type Failures, stillCounted } from "../store/name-failures.js";

/**
 * The back-off of failed logins, kept per name typed: for a name that holds an account that can
 * log in, in its credentials row (shared by every instance through the database); for any other
 * name (unknown, disabled, without a password) in a counter store (Redis, or this process's
 * memory), so that an invented name backs off exactly as a real one (same status, same time, same
 * rule) without a database row per name an attacker types.
 */

/**
 * Failed logins before a name backs off; the first and the longest back-off; how long failures
 * are remembered after the last one (then the count starts again).
 */
export const LOCKOUT = { threshold: 5, firstSeconds: 15, maxSeconds: 15 * 60, forgetAfterSeconds: 24 * 3600 } as const;

/** How long the failures of a name are remembered after the last one, as the stores of name failures take it. */
export const FORGET_FAILURES_AFTER_MS = LOCKOUT.forgetAfterSeconds * 1000;

/** The failures still counted at `now`: forgotten a day after the last one. */
export function current(failures: Failures, now: number): Failures {
  return stillCounted(failures, now, FORGET_FAILURES_AFTER_MS);
}

/** LOCKOUT as the stores of name failures take it. */
export const BACK_OFF: BackOff = {
  threshold: LOCKOUT.threshold,
  firstMs: LOCKOUT.firstSeconds * 1000,
  maxMs: LOCKOUT.maxSeconds * 1000,
};

/** Until when (ms) a name with these failures is refused without a look at the password; 0 when it is not. */
export const lockedUntil = (failures: Failures): number => backedOffUntil(failures, BACK_OFF);

/**
 * The store key of a name as typed: a digest, so that no store holds the names (people type
 * passwords into that field), compared as user names are (case-insensitively, NFC).
 */
export const nameKey = (userName: string) =>
  createHash("sha256")
    .update(`login-name\n${userName.normalize("NFC").toLowerCase()}`)
    .digest("base64url");
