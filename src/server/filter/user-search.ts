import { type RawBuilder, sql } from "kysely";
import { userNameKey } from "../../contract/resources.js";
import { foldForSearch, SEARCH_PATH, SEPARATOR } from "../store/user-search-text.js";
import { escapeLike } from "./compile.js";

type Dialect = "sqlite" | "postgres";

/** Below this many characters a text is looked for at the start of the values only: no trigram holds it. */
export const CONTAINS_MIN_LENGTH = 3;

/** The rank of a match: the smaller, the better. */
const RANK = { exactUserName: 0, prefix: 1, contains: 2 } as const;

/** A User's search rows (user-search-text.ts), the path a literal: PostgreSQL's index of them is partial. */
const searchRowsOf = (alias: string) => sql`${sql.ref(`${alias}.path`)} = ${sql.lit(SEARCH_PATH)}`;

/**
 * A free-text search over Users' names, e-mails and externalId, as SQL over `resources r`: the
 * condition that keeps the Users it finds, and the order that shows the best first (an exact user
 * name, then a value that starts with the text, then one that contains it; by user name within
 * each). It reads each User's search rows, its searched values folded (case and accents ignored:
 * `muller` finds `Müller`), and folds the text the same way.
 *
 * The condition reads an index whatever the directory's size: on SQLite the FTS5 trigram index
 * (migrations 0027, 0032), on PostgreSQL pg_trgm's GIN index of the search rows alone (0042), a
 * row a User. A text under three characters is looked for at the start of a value: its separator
 * and it make the trigram on SQLite, pg_trgm pads a word's start. The rank is worked out for the
 * Users found alone, from their own search rows.
 */
export function userSearch(text: string, dialect: Dialect) {
  const needle = foldForSearch(text);
  const contains = [...needle].length >= CONTAINS_MIN_LENGTH;
  const pattern = contains ? `%${escapeLike(needle)}%` : `%${escapeLike(SEPARATOR + needle)}%`;
  const looked = contains ? needle : SEPARATOR + needle;
  const where = sql`r.id in (select v.resource_id from ${source(dialect, looked)}
    where ${searchRowsOf("v")} and v.text_value like ${pattern} escape '\\')`;
  return {
    where,
    order: { keys: [contains ? rankOf(needle) : shortRankOf(text), sql`r.user_name_key`], unique: false },
  };
}

/**
 * The rank of a User found by a text of three characters or more, from its search rows: row 0
 * starts with the user name between separators, a separator comes before each value.
 */
function rankOf(needle: string): RawBuilder<unknown> {
  const exact = `${escapeLike(SEPARATOR + needle + SEPARATOR)}%`;
  const prefix = `%${escapeLike(SEPARATOR + needle)}%`;
  return sql`(select min(case when s.elem = 0 and s.text_value like ${exact} escape '\\' then ${RANK.exactUserName}
    when s.text_value like ${prefix} escape '\\' then ${RANK.prefix} else ${RANK.contains} end)
    from resource_values s where s.resource_id = r.id and ${searchRowsOf("s")})`;
}

/**
 * The rank of a User found by a shorter text: all it finds are prefixes, and the exact user name
 * is told by the user name's key, without reading the User's search rows again (a text of two
 * characters finds most of a directory: reading them took 100,000 lookups). Its accents count.
 */
function shortRankOf(text: string): RawBuilder<unknown> {
  return sql`(case when r.user_name_key = ${userNameKey(text)} then ${RANK.exactUserName} else ${RANK.prefix} end)`;
}

/**
 * Where the search rows come from: on SQLite, the rows the trigram index says hold the text (CROSS
 * JOIN keeps SQLite from walking the values of each path instead, as resources-target.ts explains),
 * unless it has fewer than three characters, which the index cannot look for; PostgreSQL's planner
 * reads its trigram index for the LIKE itself.
 */
function source(dialect: Dialect, looked: string) {
  if (dialect !== "sqlite" || [...looked].length < 3) return sql`resource_values v`;
  const phrase = `"${looked.replaceAll('"', '""')}"`;
  return sql`resource_values_trigram cross join resource_values v on v.id = resource_values_trigram.rowid and resource_values_trigram match ${phrase}`;
}
