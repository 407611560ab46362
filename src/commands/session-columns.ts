/** The columns of a session table: `users sessions` shows them, `auth sessions` marks the current one first. */
export const SESSION_COLUMNS = ["id", "created", "lastUsed", "expires", "clientIp", "userAgent"];
