import {
  type CryptoKey,
  exportJWK,
  generateKeyPair,
  importJWK,
  type JWK,
  type JWTPayload,
  errors as joseErrors,
  jwtVerify,
  SignJWT,
} from "jose";
import { ProblemError } from "../problem-error.js";
import type { KeyStorage } from "./key-storage.js";

export const TOKEN_ISSUER = "urn:bizctl";
export const TOKEN_AUDIENCE = "bizctl-api";
const TOKEN_TYPE = "at+jwt";
/**
 * RFC 9068's `client_id` of a token a password login issues: the first-party client (the CLI, or
 * a script speaking for it). OAuth consumers get token credentials, never these tokens.
 */
export const FIRST_PARTY_CLIENT = "bizctl-cli";
const ALGORITHM = "ES256";
/** Tokens above this size are refused before any parsing (spec 1.1). */
export const MAX_TOKEN_BYTES = 8 * 1024;
const CACHE_LIMIT = 10_000;

interface LoadedKey {
  kid: string;
  signFrom: number;
  privateKey: CryptoKey;
  publicKey: CryptoKey;
  publicJwk: JWK;
}

export interface AccessClaims {
  sub: string;
  jti: string;
  exp: number;
  iat: number;
  roles: string[];
}

export async function createKey(storage: KeyStorage, now: Date, signFrom: Date = now): Promise<string> {
  const { privateKey } = await generateKeyPair(ALGORITHM, { extractable: true });
  const privateJwk = await exportJWK(privateKey);
  const kid = `${now.toISOString().slice(0, 10)}-${crypto.randomUUID().slice(0, 8)}`;
  await storage.add({ kid, createdAt: now.toISOString(), signFrom: signFrom.toISOString(), privateJwk });
  return kid;
}

async function loadKeys(storage: KeyStorage): Promise<LoadedKey[]> {
  const keys: LoadedKey[] = [];
  for (const stored of await storage.list()) {
    const { d: _secret, ...publicJwk } = stored.privateJwk;
    keys.push({
      kid: stored.kid,
      signFrom: Date.parse(stored.signFrom),
      privateKey: (await importJWK(stored.privateJwk, ALGORITHM)) as CryptoKey,
      publicKey: (await importJWK(publicJwk, ALGORITHM)) as CryptoKey,
      publicJwk: { ...publicJwk, kid: stored.kid, alg: ALGORITHM, use: "sig" },
    });
  }
  return keys.sort((a, b) => a.signFrom - b.signFrom);
}

/**
 * How often a running server looks for keys added or retired by `server rotate-key` on any
 * instance: the bound, documented in the README, within which a rotation reaches every instance.
 */
export const RELOAD_INTERVAL_MS = 30_000;

/**
 * The ES256 key pairs of an installation: signs access tokens, verifies them, publishes the JWKS.
 * Keys rotate by kid: a new key is published first and signs from its `signFrom` on; every
 * instance re-reads the storage every 30 s, and at once when it meets an unknown kid.
 */
export class KeyRing {
  private readonly verified = new Map<string, AccessClaims>();
  private loadedAt: number;
  private reloading?: Promise<void>;
  private lastUnknownKid = 0;

  private constructor(
    private readonly storage: KeyStorage,
    private keys: LoadedKey[],
    private readonly clock: () => Date,
  ) {
    this.loadedAt = Date.now();
  }

  /** Loads every key (so that a wrong secret fails here, at start), creating the first one. */
  static async open(storage: KeyStorage, clock: () => Date): Promise<KeyRing> {
    let keys = await loadKeys(storage);
    if (keys.length === 0) {
      await createKey(storage, clock());
      keys = await loadKeys(storage);
    }
    return new KeyRing(storage, keys, clock);
  }

  /**
   * Re-reads the storage every RELOAD_INTERVAL_MS, traffic or not, until the returned function is
   * called; a failed read (the database away) keeps the keys loaded before.
   */
  refreshPeriodically(onError: (error: unknown) => void): () => void {
    const timer = setInterval(() => this.reload().catch(onError), RELOAD_INTERVAL_MS);
    timer.unref();
    return () => clearInterval(timer);
  }

  /** Re-reads the storage, at most once per `minIntervalMs`; never leaves the ring empty. */
  async reload(minIntervalMs = 0): Promise<void> {
    if (Date.now() - this.loadedAt < minIntervalMs) return;
    this.reloading ??= (async () => {
      try {
        const keys = await loadKeys(this.storage);
        if (keys.length > 0) this.keys = keys;
      } finally {
        this.loadedAt = Date.now();
        this.reloading = undefined;
      }
    })();
    await this.reloading;
  }

  jwks(): { keys: JWK[] } {
    return { keys: this.keys.map((k) => k.publicJwk) };
  }

  private signingKey(): LoadedKey {
    const now = this.clock().getTime();
    const ready = this.keys.filter((k) => k.signFrom <= now);
    return ready.at(-1) ?? (this.keys[0] as LoadedKey);
  }

  async sign(claims: { sub: string; jti: string; roles: string[]; clientId?: string }, ttlSeconds: number) {
    const key = this.signingKey();
    const iat = Math.floor(this.clock().getTime() / 1000);
    const exp = iat + ttlSeconds;
    const token = await new SignJWT({ client_id: claims.clientId ?? FIRST_PARTY_CLIENT, roles: claims.roles })
      .setProtectedHeader({ alg: ALGORITHM, kid: key.kid, typ: TOKEN_TYPE })
      .setIssuer(TOKEN_ISSUER)
      .setAudience(TOKEN_AUDIENCE)
      .setSubject(claims.sub)
      .setJti(claims.jti)
      .setIssuedAt(iat)
      .setExpirationTime(exp)
      .sign(key.privateKey);
    return { token, expiresAt: new Date(exp * 1000) };
  }

  /**
   * Verifies signature, algorithm, issuer, audience, typ and expiry. A verified token is cached
   * until it expires, since the signature check is most of an authenticated request's cost;
   * revocation is not decided here, the caller checks the session each time.
   */
  async verify(token: string): Promise<AccessClaims> {
    if (Buffer.byteLength(token) > MAX_TOKEN_BYTES) {
      throw new ProblemError("token_invalid", `The token is larger than ${MAX_TOKEN_BYTES} bytes.`);
    }
    const nowSeconds = Math.floor(this.clock().getTime() / 1000);
    const cached = this.verified.get(token);
    if (cached) {
      if (cached.exp > nowSeconds) return cached;
      this.verified.delete(token);
      throw new ProblemError("token_expired", "The token has expired; log in again.");
    }
    let payload: JWTPayload;
    try {
      ({ payload } = await jwtVerify(token, async (header) => this.publicKeyFor(header.kid), {
        algorithms: [ALGORITHM],
        issuer: TOKEN_ISSUER,
        audience: TOKEN_AUDIENCE,
        typ: TOKEN_TYPE,
        currentDate: this.clock(),
        requiredClaims: ["sub", "jti", "exp", "iat"],
      }));
    } catch (error) {
      if (error instanceof joseErrors.JWTExpired) {
        throw new ProblemError("token_expired", "The token has expired; log in again.");
      }
      throw new ProblemError("token_invalid", "The token is not valid for this server.");
    }
    const claims: AccessClaims = {
      sub: String(payload.sub),
      jti: String(payload.jti),
      exp: Number(payload.exp),
      iat: Number(payload.iat),
      roles: Array.isArray(payload.roles) ? payload.roles.map(String) : [],
    };
    if (this.verified.size >= CACHE_LIMIT) {
      const oldest = this.verified.keys().next().value;
      if (oldest !== undefined) this.verified.delete(oldest);
    }
    this.verified.set(token, claims);
    return claims;
  }

  private async publicKeyFor(kid: string | undefined): Promise<CryptoKey> {
    // a kid published by another instance's rotation since we last looked (bounded, so that
    // tokens with made-up kids cannot make us read the directory on every request)
    if (!this.keys.some((k) => k.kid === kid) && Date.now() - this.lastUnknownKid > 5_000) {
      this.lastUnknownKid = Date.now();
      await this.reload();
    }
    const key = this.keys.find((k) => k.kid === kid);
    if (!key) throw new ProblemError("token_invalid", "The token was signed by an unknown key.");
    return key.publicKey;
  }
}

/**
 * `server rotate-key`: a new key, published now and signing after `publishSeconds` (long enough
 * for every instance and JWKS cache to see it); keys that stopped signing more than a token
 * lifetime ago are removed, since no valid token can carry them any more.
 */
export async function rotateKeys(
  storage: KeyStorage,
  now: Date,
  options: { publishSeconds: number; tokenTtlSeconds: number },
): Promise<{ kid: string; signFrom: string; removed: string[]; storage: string }> {
  const signFrom = new Date(now.getTime() + options.publishSeconds * 1000);
  const kid = await createKey(storage, now, signFrom);
  const stored = (await storage.list()).sort((a, b) => Date.parse(a.signFrom) - Date.parse(b.signFrom));
  const removed: string[] = [];
  for (const [index, key] of stored.entries()) {
    const successor = stored[index + 1];
    if (successor && Date.parse(successor.signFrom) + options.tokenTtlSeconds * 1000 < now.getTime()) {
      await storage.remove(key.kid);
      removed.push(key.kid);
    }
  }
  return { kid, signFrom: signFrom.toISOString(), removed, storage: storage.describe };
}
