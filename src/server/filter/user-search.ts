import { type RawBuilder, sql } from "kysely";
import { userNameKey } from "../../contract/resources.js";
import { escapeLike } from "./compile.js";

type Dialect = "sqlite" | "postgres";

/** The values a free-text search of Users reads, as resource_values names them (lower-cased paths). */
export const SEARCHED_PATHS = [
  "username",
  "name.givenname",
  "name.familyname",
  "name.formatted",
  "displayname",
  "emails.value",
  "externalid",
] as const;

/** Below this many characters a text is looked for at the start of the values only: no trigram holds it. */
export const CONTAINS_MIN_LENGTH = 3;

/** The rank of a match: the smaller, the better. */
const RANK = { exactUserName: 0, prefix: 1, contains: 2 } as const;

/**
 * A free-text search over Users' names, e-mails and externalId, as SQL over `resources r`: the
 * condition that keeps the Users it finds, and the order that shows the best first (an exact user
 * name, then a value that starts with the text, then one that contains it; by user name within
 * each). Values are stored lower-cased, so the text is too: the search ignores case.
 *
 * The condition reads an index whatever the directory's size: on SQLite the FTS5 trigram index
 * (migrations 0027, 0032), on PostgreSQL pg_trgm's GIN index (0026) for a text of three
 * characters or more; a shorter text matches at the start of a value, through the prefix index
 * (0025). The rank is worked out for the Users found alone, by their own values.
 */
export function userSearch(text: string, dialect: Dialect) {
  const needle = text.normalize("NFC").toLowerCase();
  const contains = [...needle].length >= CONTAINS_MIN_LENGTH;
  const prefixPattern = `${escapeLike(needle)}%`;
  const pattern = contains ? `%${escapeLike(needle)}%` : prefixPattern;
  const paths = sql.join([...SEARCHED_PATHS]);
  const matches = (alias: string, like: string) =>
    sql`${sql.ref(`${alias}.path`)} in (${paths}) and ${sql.ref(`${alias}.kind`)} = 's' and ${sql.ref(`${alias}.text_value`)} like ${like} escape '\\'`;
  const where = sql`r.id in (select v.resource_id from ${source(dialect, contains ? needle : undefined)} where ${matches("v", pattern)})`;
  // a short text found only values that start with it: no User's values need reading again
  const prefixed = contains
    ? sql`exists (select 1 from resource_values s where s.resource_id = r.id and ${matches("s", prefixPattern)})`
    : sql`1 = 1`;
  const rank: RawBuilder<unknown> = sql`(case when r.user_name_key = ${userNameKey(text)} then ${RANK.exactUserName}
    when ${prefixed} then ${RANK.prefix} else ${RANK.contains} end)`;
  return { where, order: { keys: [rank, sql`r.user_name_key`], unique: false } };
}

/**
 * Where the values come from: on SQLite, for a contained text, the rows the trigram index says
 * hold it (CROSS JOIN keeps SQLite from walking the values of each path instead, as
 * resources-target.ts explains); PostgreSQL's planner reads its trigram index for the LIKE itself.
 */
function source(dialect: Dialect, contained: string | undefined) {
  if (dialect !== "sqlite" || contained === undefined) return sql`resource_values v`;
  const phrase = `"${contained.replaceAll('"', '""')}"`;
  return sql`resource_values_trigram cross join resource_values v on v.id = resource_values_trigram.rowid and resource_values_trigram match ${phrase}`;
}
