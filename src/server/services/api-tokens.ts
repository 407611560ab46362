/**
 * API tokens for scripts (spec 1.7): a user creates, lists and revokes their own; admins list and
 * revoke anyone's. The token is shown once, in the answer of its creation, and kept only as a
 * hash; no audit record, log line or problem document ever holds it.
 */
import { createHash, randomBytes } from "node:crypto";
import { API_TOKEN_DEFAULT_DAYS, API_TOKEN_PREFIX } from "../../contract/api-tokens.js";
import { API_TOKEN_SCOPES, type ApiTokenScope } from "../../contract/route.js";
import { formatTimestamp } from "../http/timestamps.js";
import { ProblemError } from "../problem-error.js";
import { insertApiToken, listApiTokens, revokeApiToken } from "../store/api-tokens-repo.js";
import { findAccountById } from "../store/users-repo.js";
import { auditBy, userTarget } from "./audit.js";
import type { Principal, ServiceContext } from "./service-context.js";

const BASE62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
/** 32 base62 characters: 32 × log2(62) ≈ 190 bits of randomness (the spec asks for at least 160). */
const TOKEN_CHARACTERS = 32;
/** The largest multiple of 62 a byte holds: bytes from it on are dropped, so every character is equally likely. */
const UNBIASED_BELOW = 62 * 4;

/** `bzt_` and 32 random base62 characters (not the repo's hex tokens: the spec asks for base62). */
export function newApiToken(): string {
  let out = API_TOKEN_PREFIX;
  while (out.length < API_TOKEN_PREFIX.length + TOKEN_CHARACTERS) {
    for (const byte of randomBytes(TOKEN_CHARACTERS)) {
      if (byte >= UNBIASED_BELOW) continue;
      out += BASE62[byte % 62];
      if (out.length === API_TOKEN_PREFIX.length + TOKEN_CHARACTERS) break;
    }
  }
  return out;
}

/** Whether a Bearer credential has the shape of an API token (anything else is read as a JWT). */
export const looksLikeApiToken = (token: string): boolean => token.startsWith(API_TOKEN_PREFIX);

/** Whether it could be one we issued: the prefix and exactly 32 base62 characters. */
export const isWellFormedApiToken = (token: string): boolean => /^bzt_[0-9A-Za-z]{32}$/.test(token);

/**
 * What is stored of a token: its SHA-256. A slow password hash (argon2) protects what people
 * choose, which can be guessed; this token is 190 random bits, which no one can find from its
 * hash by trying, so a slow hash would buy nothing and cost its time on every request. Unsalted,
 * the same token always has the same hash: the request finds its row by an index on it.
 */
export function hashApiToken(token: string): string {
  return createHash("sha256").update(token).digest("hex");
}

/** The scopes as stored: space-separated, in the contract's order. */
export const writeScopes = (scopes: readonly ApiTokenScope[]): string =>
  API_TOKEN_SCOPES.filter((scope) => scopes.includes(scope)).join(" ");

/** The scopes of a stored token; a name this build does not know is dropped (it grants nothing). */
export const readScopes = (stored: string): ApiTokenScope[] =>
  stored.split(" ").filter((scope): scope is ApiTokenScope => (API_TOKEN_SCOPES as readonly string[]).includes(scope));

const DAY_MS = 86_400_000;

const self = (principal: Principal) => ({ id: principal.userId, userName: principal.userName });

export interface CreateInput {
  name: string;
  expiresInDays?: number;
  scopes?: ApiTokenScope[];
}

/**
 * Creates a token of the caller. Without scopes it gets every scope there is now, written out:
 * the owner's roles unnarrowed, and no scope a later version adds (a token never gains power
 * after it is made). The route refuses delegated credentials (a token cannot create tokens).
 */
export async function createApiToken(ctx: ServiceContext, principal: Principal, input: CreateInput) {
  return createTokenOf(ctx, principal, self(principal), input);
}

/** Creates a token of `owner` (the caller's own, or a service account's made by an admin). */
export async function createTokenOf(
  ctx: ServiceContext,
  principal: Principal,
  owner: { id: string; userName: string },
  input: CreateInput,
) {
  const now = ctx.clock();
  const token = newApiToken();
  const scopes = writeScopes(input.scopes ?? API_TOKEN_SCOPES);
  const row = {
    id: crypto.randomUUID(),
    token_hash: hashApiToken(token),
    user_id: owner.id,
    name: input.name,
    scopes,
    created_at: now.toISOString(),
    expires_at: new Date(now.getTime() + (input.expiresInDays ?? API_TOKEN_DEFAULT_DAYS) * DAY_MS).toISOString(),
  };
  await ctx.store.db.transaction().execute(async (trx) => {
    await insertApiToken(trx, row);
    await auditBy(ctx, trx, principal, {
      action: "token.create",
      target: userTarget(owner),
      details: { tokenId: row.id, name: row.name, scopes, expiresAt: row.expires_at },
    });
  });
  return {
    token,
    id: row.id,
    name: row.name,
    scopes: readScopes(scopes),
    createdAt: formatTimestamp(now),
    expiresAt: formatTimestamp(new Date(row.expires_at)),
  };
}

type ListedRow = Awaited<ReturnType<typeof listApiTokens>>[number];

function listed(row: ListedRow) {
  return {
    id: row.id,
    name: row.name,
    scopes: readScopes(row.scopes),
    createdAt: formatTimestamp(new Date(row.created_at)),
    expiresAt: formatTimestamp(new Date(row.expires_at)),
    ...(row.last_used_at && { lastUsedAt: formatTimestamp(new Date(row.last_used_at)) }),
    ...(row.last_used_ip && { lastUsedIp: row.last_used_ip }),
  };
}

export async function listOwnApiTokens(ctx: ServiceContext, principal: Principal) {
  return { tokens: (await listApiTokens(ctx.store.db, principal.userId)).map(listed) };
}

/** Revokes a token of `owner`; 404 when the owner has no such live token. The next request with it is refused. */
async function revoke(
  ctx: ServiceContext,
  principal: Principal,
  owner: { id: string; userName: string },
  tokenId: string,
  by: "owner" | "admin",
): Promise<void> {
  const revoked = await ctx.store.db.transaction().execute(async (trx) => {
    const token = await revokeApiToken(trx, owner.id, tokenId, ctx.clock());
    if (token) {
      await auditBy(ctx, trx, principal, {
        action: "token.revoke",
        target: userTarget(owner),
        details: { tokenId, name: token.name, by },
      });
    }
    return token;
  });
  if (!revoked) throw new ProblemError("not_found", `No API token with id ${tokenId}.`);
}

export async function revokeOwnApiToken(ctx: ServiceContext, principal: Principal, tokenId: string): Promise<void> {
  await revoke(ctx, principal, self(principal), tokenId, "owner");
}

/** The User an admin acts on (the route lets only admins in); 404 for anything not a User. */
async function ownerOf(ctx: ServiceContext, userId: string) {
  const account = await findAccountById(ctx.store.db, userId);
  if (!account) throw new ProblemError("not_found", `No user with id ${userId}.`);
  return account;
}

export async function listUserApiTokens(ctx: ServiceContext, userId: string) {
  const owner = await ownerOf(ctx, userId);
  return { tokens: (await listApiTokens(ctx.store.db, owner.id)).map(listed) };
}

export async function revokeUserApiToken(
  ctx: ServiceContext,
  principal: Principal,
  userId: string,
  tokenId: string,
): Promise<void> {
  const owner = await ownerOf(ctx, userId);
  await revoke(ctx, principal, owner, tokenId, "admin");
}
