const UNREACHABLE_CODES = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "ETIMEDOUT",
  "EPIPE",
  "ENOTFOUND",
  "EAI_AGAIN",
  // PostgreSQL: admin_shutdown, crash_shutdown, cannot_connect_now, too_many_connections
  "57P01",
  "57P02",
  "57P03",
  "53300",
  // SQLite: another process holds the lock past busy_timeout
  "SQLITE_BUSY",
  "SQLITE_BUSY_SNAPSHOT",
  "SQLITE_LOCKED",
]);

/**
 * True when the database could not be reached or was restarting: a condition to retry, not a bug.
 * node-postgres reports some of these with a message only.
 */
export function isDatabaseUnavailable(error: unknown): boolean {
  const { code, message } = (error ?? {}) as { code?: unknown; message?: unknown };
  if (typeof code === "string" && (UNREACHABLE_CODES.has(code) || code.startsWith("08"))) return true;
  return (
    typeof message === "string" &&
    /Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error/.test(
      message,
    )
  );
}

/** True when a write failed on a unique or primary-key constraint (SQLite or PostgreSQL). */
export function isUniqueViolation(error: unknown): boolean {
  const code = (error as { code?: unknown })?.code;
  return code === "SQLITE_CONSTRAINT_PRIMARYKEY" || code === "SQLITE_CONSTRAINT_UNIQUE" || code === "23505";
}

/**
 * True when a unique violation is on `column`: SQLite names the columns in its message, PostgreSQL
 * the index (`constraint`) and the key (`detail`).
 */
export function isUniqueViolationOn(error: unknown, column: string): boolean {
  if (!isUniqueViolation(error)) return false;
  const { message, constraint, detail } = error as { message?: unknown; constraint?: unknown; detail?: unknown };
  return [message, constraint, detail].some((text) => typeof text === "string" && text.includes(column));
}

/**
 * True when PostgreSQL refused a text value it cannot hold: NUL (U+0000) in text (22021) or in a
 * JSON value (22P05). SQLite stores such text; PostgreSQL cannot, so there it is bad input.
 */
export function isUnstorableText(error: unknown): boolean {
  const code = (error as { code?: unknown })?.code;
  return code === "22021" || code === "22P05";
}
