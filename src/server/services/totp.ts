import { generateSecret, generateSync, verifySync } from "otplib";

/**
 * TOTP as RFC 6238 defines it and authenticator apps expect it: HMAC-SHA-1, 6 digits, 30 s steps
 * counted from the Unix epoch, one step of clock drift accepted either way. The one place the
 * parameters are written; everything else asks this module.
 */
export const TOTP = { algorithm: "sha1", digits: 6, period: 30, drift: 1, issuer: "bizctl" } as const;

/** A new seed: 20 random bytes (160 bits, RFC 4226's recommendation) in base32. */
export function newTotpSecret(): string {
  return generateSecret({ length: 20 });
}

/** The key URI authenticator apps read (a QR code of it), with every parameter spelled out. */
export function totpUri(userName: string, secret: string): string {
  const label = `${encodeURIComponent(TOTP.issuer)}:${encodeURIComponent(userName)}`;
  const query = new URLSearchParams({
    secret,
    issuer: TOTP.issuer,
    algorithm: TOTP.algorithm.toUpperCase(),
    digits: String(TOTP.digits),
    period: String(TOTP.period),
  });
  return `otpauth://totp/${label}?${query}`;
}

/** The time step of an instant (ms since 1970). */
export const timeStep = (ms: number): number => Math.floor(ms / 1000 / TOTP.period);

/**
 * The code of `secret` (base32, or raw bytes) at `ms`. `digits` other than 6 only for the
 * RFC's own test vectors, which are 8 digits long.
 */
export function totpCode(secret: string | Uint8Array, ms: number, digits: 6 | 8 = TOTP.digits): string {
  return generateSync({
    secret,
    epoch: Math.floor(ms / 1000),
    algorithm: TOTP.algorithm,
    digits,
    period: TOTP.period,
  });
}

/**
 * The time step `code` belongs to, when it is the code of `secret` at `ms` or one step either
 * side, and of a step later than `afterStep` (the last one accepted: a code is good once);
 * undefined otherwise. The comparison is constant-time (otplib).
 */
export function matchTotp(secret: string, code: string, ms: number, afterStep?: number): number | undefined {
  if (!/^\d{6}$/.test(code)) return undefined;
  const result = verifySync({
    secret,
    token: code,
    epoch: Math.floor(ms / 1000),
    algorithm: TOTP.algorithm,
    digits: TOTP.digits,
    period: TOTP.period,
    epochTolerance: TOTP.drift * TOTP.period,
    ...(afterStep !== undefined && { afterTimeStep: afterStep }),
  });
  return result.valid && "timeStep" in result ? result.timeStep : undefined;
}
