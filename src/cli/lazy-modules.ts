/**
 * A CommonJS package imported dynamically from the ESM bundle arrives with its exports under
 * `default`; unbundled (tests, tsx) they are also named. This accepts both.
 */
export function commonJs<T extends object>(module: T): T {
  return (module as T & { default?: T }).default ?? module;
}

export async function importYaml() {
  return commonJs(await import("yaml"));
}
