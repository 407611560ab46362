const BY_TYPE: Record<string, string[]> = {
  User: ["id", "userName", "displayName", "active", "roles", "firstLogin"],
  OAuthConsumer: ["id", "name", "consumerKey", "callbackUrls"],
};

/** Table columns that fit the records listed: a type's own, or the common ones for a mix. */
export function resourceColumns(rows: Record<string, unknown>[]): string[] | undefined {
  const types = new Set(rows.map((r) => r.resourceType));
  if (types.size !== 1) return ["id", "resourceType", "displayName", "userName", "name"];
  const [type] = types;
  return BY_TYPE[String(type)];
}
