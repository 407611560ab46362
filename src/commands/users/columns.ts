/**
 * What a table shows of a user, for a help desk: how to name it, what it may do and whether it
 * can log in (`users get` shows the rest); every attribute goes to JSON, YAML and CSV.
 */
export const USER_COLUMNS = ["id", "userName", "emails", "roles", "active", "passwordState", "locked"];
