import type { Kysely } from "kysely";
import type { ResourceValuesTable, Schema } from "./schema.js";

type ValueRow = Omit<ResourceValuesTable, "resource_id">;

const keyOf = (row: ValueRow) => JSON.stringify([row.path, row.elem, row.kind, row.text_value, row.num_value]);

/**
 * The value rows a change of a resource removes and adds, from its rows as stored and as they
 * are to be: a change of a title rewrites one row, where deleting and inserting them all rewrote
 * every row and its four indexes. Undefined when a row repeats in either (a delete by columns
 * would take every copy): the caller rewrites them all.
 */
export function changedValueRows(
  before: ValueRow[],
  after: ValueRow[],
): { removed: ValueRow[]; added: ValueRow[] } | undefined {
  const old = new Map(before.map((row) => [keyOf(row), row]));
  const next = new Map(after.map((row) => [keyOf(row), row]));
  if (old.size !== before.length || next.size !== after.length) return undefined;
  return {
    removed: [...old].flatMap(([key, row]) => (next.has(key) ? [] : [row])),
    added: [...next].flatMap(([key, row]) => (old.has(key) ? [] : [row])),
  };
}

/** Deletes these value rows of the resource, each matched by all its columns, in one statement. */
export async function deleteValueRows(db: Kysely<Schema>, id: string, rows: ValueRow[]): Promise<void> {
  if (rows.length === 0) return;
  await db
    .deleteFrom("resource_values")
    .where("resource_id", "=", id)
    .where((eb) =>
      eb.or(
        rows.map((row) =>
          eb.and([
            eb("path", "=", row.path),
            row.elem === null ? eb("elem", "is", null) : eb("elem", "=", row.elem),
            eb("kind", "=", row.kind),
            row.text_value === null ? eb("text_value", "is", null) : eb("text_value", "=", row.text_value),
            row.num_value === null ? eb("num_value", "is", null) : eb("num_value", "=", row.num_value),
          ]),
        ),
      ),
    )
    .execute();
}
