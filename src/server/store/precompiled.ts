import { type Compilable, CompiledQuery, type Kysely } from "kysely";
import type { Schema } from "./schema.js";

/**
 * A query built and compiled once per database, then run with new values: on the per-request
 * paths the query builder and its compiler cost more than SQLite's indexed read (about 60 µs
 * against 20 µs measured). `build` receives markers; each marker's parameter slot takes the
 * value given at the same position when the query runs.
 */
export function precompiled<Row, Args extends string[]>(
  build: (db: Kysely<Schema>, ...markers: Args) => Compilable<Row>,
  arity: Args["length"],
): (db: Kysely<Schema>, ...args: Args) => Promise<Row[]> {
  const cache = new WeakMap<Kysely<Schema>, { sql: string; slots: (number | { value: unknown })[] }>();
  const markers = Array.from({ length: arity }, (_, i) => `\u0000bizctl-marker-${i}\u0000`) as Args;
  return async (db, ...args) => {
    let entry = cache.get(db);
    if (!entry) {
      const compiled = build(db, ...markers).compile();
      const slots = compiled.parameters.map((p) => {
        const index = markers.indexOf(p as string);
        return index >= 0 ? index : { value: p };
      });
      entry = { sql: compiled.sql, slots };
      cache.set(db, entry);
    }
    const parameters = entry.slots.map((slot) => (typeof slot === "number" ? args[slot] : slot.value));
    const result = await db.executeQuery<Row>(CompiledQuery.raw(entry.sql, parameters));
    return result.rows;
  };
}
