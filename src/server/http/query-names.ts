/**
 * Query parameter names read in any case, for the operations whose contract says so
 * (`queryNamesAnyCase`): a name that is a declared one in another case (`pageSize`) becomes the
 * declared one before the query is validated; any other name stays as sent, so that its refusal
 * quotes it. One name sent twice in two cases is two values, refused as any repeated parameter.
 */
export function declaredNames(
  declared: readonly string[],
): (query: Record<string, unknown>) => Record<string, unknown> {
  const byLowerCase = new Map(declared.map((name) => [name.toLowerCase(), name]));
  const spelled = (name: string) => byLowerCase.get(name.toLowerCase()) ?? name;
  return (query) => {
    if (Object.keys(query).every((name) => spelled(name) === name)) return query;
    const merged = new Map<string, unknown>();
    for (const [name, value] of Object.entries(query)) {
      const before = merged.get(spelled(name));
      merged.set(spelled(name), before === undefined ? value : ([] as unknown[]).concat(before, value));
    }
    // fromEntries defines each name as an own property, `__proto__` too
    return Object.fromEntries(merged);
  };
}
