/**
 * A digest of every table of the app's database (SQLite or PostgreSQL), to prove that a refused
 * request changed nothing. Tables are found by introspection, so a table a later migration adds
 * is covered without touching this file.
 */
import { createHash } from "node:crypto";
import type { Kysely } from "kysely";

/**
 * What a refused request may legitimately change, and why it is left out of the digest:
 * - `oauth_nonces`: a signed request's nonce is recorded as soon as its signature holds, before
 *   the handler may refuse the request (replay protection must not depend on the handler);
 * - `credentials.failed_logins`, `locked_until`, `last_failed_login_at`, `updated_at`: the backoff a refused login is
 *   meant to leave behind (spec: account lockout);
 * - `sessions.last_used_at`, `oauth_tokens.last_used_at`: when a credential was last presented,
 *   to the minute, whatever the answer;
 * - the delivery state of `mail_queue`: the sender works through the queue in the background.
 *
 * And the rows a refused request may add: the audit trail records refusals (a wrong password, a
 * forbidden change) by design, so its records of a failure are left out, and so is the record of a
 * back-off that a run of them starts; any other record of a success stays in the digest, as a
 * refused request must never leave one.
 *
 * And the rows a request may sweep away: OAuth temporary credentials past their expiry (10 min),
 * with the authorization page's forms for them (they expire with them), are deleted at most once
 * a minute by whichever OAuth-signed request comes by, refused or not (src/server/services/oauth-signed-requests.ts,
 * `pruneNow`). Rows that expire before `asOf` are left out; the caller passes one instant, later
 * than the request, to both digests of a request, so that a row cannot expire between the two.
 */
export const DIGEST_EXCLUSIONS: Readonly<Record<string, readonly string[] | "table">> = {
  oauth_nonces: "table",
  credentials: ["failed_logins", "locked_until", "last_failed_login_at", "updated_at"],
  sessions: ["last_used_at"],
  oauth_tokens: ["last_used_at"],
  mail_queue: ["status", "attempts", "next_attempt_at", "claimed_until", "claimed_by", "last_error", "sent_at"],
};

const expiredBy = (row: Record<string, unknown>, asOf?: string) =>
  asOf !== undefined && String(normalise(row.expires_at)) < asOf;

const DIGEST_ROW_EXCLUSIONS: Readonly<Record<string, (row: Record<string, unknown>, asOf?: string) => boolean>> = {
  // a back-off that starts is what refused logins and codes are meant to leave behind (spec:
  // account lockout), as the credentials columns above: its record is left out too
  audit_log: (row) => row.outcome !== "success" || row.action === "lockout",
  oauth_temporary_credentials: expiredBy,
  oauth_page_forms: expiredBy,
};

export interface DatabaseDigest {
  /** sha256 over every kept row of every table */
  hash: string;
  /** table → its kept rows, JSON, sorted: what a failure shows */
  tables: Record<string, string[]>;
}

// biome-ignore lint/suspicious/noExplicitAny: a digest reads every table, whatever the schema type says
export async function databaseDigest(db: Kysely<any>, options: { asOf?: Date } = {}): Promise<DatabaseDigest> {
  const asOf = options.asOf?.toISOString();
  const tables: Record<string, string[]> = {};
  const hash = createHash("sha256");
  const metadata = (await db.introspection.getTables()).sort((a, b) => a.name.localeCompare(b.name));
  for (const table of metadata) {
    const excluded = DIGEST_EXCLUSIONS[table.name];
    if (excluded === "table") continue;
    const columns = table.columns.map((c) => c.name).filter((c) => !excluded?.includes(c));
    const skipRow = DIGEST_ROW_EXCLUSIONS[table.name];
    const rows = (await db.selectFrom(table.name).selectAll().execute()).filter((row) => !skipRow?.(row, asOf));
    const lines = rows.map((row) => JSON.stringify(columns.map((c) => normalise(row[c])))).sort();
    tables[table.name] = lines;
    hash.update(`${table.name}\n${lines.join("\n")}\n`);
  }
  return { hash: hash.digest("hex"), tables };
}

/** PostgreSQL hands back Dates and bigints where SQLite hands back text and numbers. */
function normalise(value: unknown): unknown {
  if (value instanceof Date) return value.toISOString();
  if (typeof value === "bigint") return value.toString();
  if (Buffer.isBuffer(value)) return value.toString("base64");
  return value;
}

/** The rows that differ between two digests, for a failure message. */
export function digestDifference(before: DatabaseDigest, after: DatabaseDigest): string {
  const out: string[] = [];
  for (const name of new Set([...Object.keys(before.tables), ...Object.keys(after.tables)])) {
    const was = new Set(before.tables[name] ?? []);
    const now = new Set(after.tables[name] ?? []);
    for (const row of was) if (!now.has(row)) out.push(`${name} - ${row.slice(0, 300)}`);
    for (const row of now) if (!was.has(row)) out.push(`${name} + ${row.slice(0, 300)}`);
  }
  return out.join("\n");
}
