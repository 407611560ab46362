/**
 * A query string carries text; the contract declares some parameters whole numbers (a page, a page
 * size). Such a value written in decimal digits, with `-` for a negative one, is read as the number
 * before the query schema validates it, which then checks its range; any other text (`1e3`, `1.5`,
 * `+1`, `0x10`, `abc`, empty) is left as it came, for the schema to refuse as not an integer.
 * Ajv's own coercion would take `1e3` and `0x10` for numbers, and bodies, which it also
 * validates, are never coerced.
 */

const DECIMAL = /^-?[0-9]+$/;

/** The names of the whole-number parameters of a query schema. */
export function integerParameters(schema: unknown): string[] {
  const properties = (schema as { properties?: Record<string, { type?: unknown }> } | undefined)?.properties ?? {};
  return Object.keys(properties).filter((name) => properties[name]?.type === "integer");
}

/** Reads the named parameters of a parsed query that are written in decimal digits as numbers, in place. */
export function readIntegers(query: Record<string, unknown>, names: readonly string[]): void {
  for (const name of names) {
    const value = query[name];
    if (typeof value === "string" && DECIMAL.test(value)) query[name] = Number(value);
  }
}
