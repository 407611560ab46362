import { createHash } from "node:crypto";
import { invalid } from "../problem-error.js";
import type { KeyValue } from "../store/events-repo.js";

/**
 * The `cursor` of the events list: where the next page starts (the sort keys of the last row
 * seen), which page number that is, and a digest of the query it belongs to (order, filter,
 * pagesize), so that a cursor cannot be replayed against another query. It is opaque to clients
 * (base64url JSON) but not secret: its keys are only bounds the caller could write as a filter.
 */
interface Cursor {
  /** the query digest */
  q: string;
  /** the page number this cursor opens */
  p: number;
  /** the sort keys of the previous page's last row */
  k: KeyValue[];
}

/** A column of a keyset order (the events' SortKey, the audit trail's id). */
export interface KeysetKey {
  column: string;
  descending: boolean;
}

export interface CursorQuery {
  sort: readonly KeysetKey[];
  /** whether a key's value is one its column holds: a cursor's bounds are checked by type too */
  fits: (column: string, value: unknown) => boolean;
  filter: string | undefined;
  pagesize: number;
}

function digest(query: CursorQuery): string {
  const order = query.sort.map((key) => `${key.descending ? "-" : ""}${key.column}`).join(",");
  return createHash("sha256")
    .update(JSON.stringify([order, query.filter ?? null, query.pagesize]))
    .digest("base64url")
    .slice(0, 16);
}

export function encodeCursor(query: CursorQuery, page: number, last: Record<string, unknown>): string {
  const keys = query.sort.map((key) => (last[key.column] ?? null) as KeyValue);
  const cursor: Cursor = { q: digest(query), p: page, k: keys };
  return Buffer.from(JSON.stringify(cursor)).toString("base64url");
}

const refused = (why: string) => invalid(`Invalid cursor: ${why}. Use the Link of the previous page.`, "/query/cursor");

/** The page number and keys of a cursor; 400 validation_failed when it is malformed or for another query. */
export function decodeCursor(text: string, query: CursorQuery): { page: number; after: KeyValue[] } {
  let value: unknown;
  try {
    if (!/^[A-Za-z0-9_-]+$/.test(text)) throw new Error("not base64url");
    value = JSON.parse(Buffer.from(text, "base64url").toString("utf8"));
  } catch {
    throw refused("it is not one this server wrote");
  }
  const cursor = value as Partial<Cursor> | null;
  if (
    !cursor ||
    typeof cursor !== "object" ||
    typeof cursor.q !== "string" ||
    !Number.isSafeInteger(cursor.p) ||
    (cursor.p as number) < 2 ||
    !Array.isArray(cursor.k) ||
    cursor.k.length !== query.sort.length
  ) {
    throw refused("it is not one this server wrote");
  }
  if (cursor.q !== digest(query)) throw refused("it belongs to a different order, filter or pagesize");
  const keys: unknown[] = cursor.k;
  if (!query.sort.every((key, i) => query.fits(key.column, keys[i]))) throw refused("a key does not fit its order");
  return { page: cursor.p as number, after: keys as KeyValue[] };
}
