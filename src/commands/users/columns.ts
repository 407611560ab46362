/** What a table shows of a user; every attribute goes to JSON, YAML and CSV. */
export const USER_COLUMNS = [
  "id",
  "userName",
  "displayName",
  "active",
  "roles",
  "firstLogin",
  "locked",
  "invited",
  "mfaEnabled",
];
