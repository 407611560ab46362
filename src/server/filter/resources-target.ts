import { type RawBuilder, sql } from "kysely";
import { SCHEMA_URN } from "../../contract/resources.js";
import { INVITED, MFA_ENABLED } from "../store/resources-repo.js";
import { type Condition, type FilterTarget, invalidFilter, type Literal, type ValueColumns } from "./compile.js";

type Dialect = "sqlite" | "postgres";

/**
 * Attributes kept in columns of `resources r` (indexed); the others are looked up in
 * resource_values. Maps, here and for the account state: an attribute path from a request is a
 * plain name, and `constructor` is an attribute a resource may hold like any other.
 */
const COLUMNS = new Map<string, ValueColumns>(
  Object.entries({
    id: { kind: "s", text: sql`r.id`, num: sql`null`, caseExact: true },
    "meta.created": { kind: "s", text: sql`r.created_at`, num: sql`null`, caseExact: true },
    "meta.lastmodified": { kind: "s", text: sql`r.updated_at`, num: sql`null`, caseExact: true },
    "meta.resourcetype": { kind: "s", text: sql`lower(r.resource_type)`, num: sql`null` },
    resourcetype: { kind: "s", text: sql`lower(r.resource_type)`, num: sql`null` },
    // case-exact (RFC 7643 section 3.1), unique per type, indexed; no kind where there is none,
    // so that `externalId ne "x"` holds for a resource without one
    externalid: {
      kind: sql`(case when r.external_id is null then '' else 's' end)`,
      text: sql`r.external_id`,
      num: sql`null`,
      caseExact: true,
    },
  }),
);

/** A User's credentials, correlated with `resources r`; null for other types. */
const credential = (expression: RawBuilder<unknown>) =>
  sql`(select ${expression} from credentials c where c.user_id = r.id and r.resource_type = 'User')`;

/**
 * The read-only account state of a User, computed as the representation shows it: locked and
 * lockedUntil, and the open sessions, depend on the time of the request.
 */
function accountColumns(nowIso: string): Record<string, ValueColumns> {
  return {
    locked: {
      kind: "b",
      text: sql`(case when r.resource_type <> 'User' then null when coalesce(${credential(sql`c.locked_until`)}, '') > ${nowIso} then 'true' else 'false' end)`,
      num: sql`null`,
    },
    lockeduntil: {
      kind: "s",
      text: credential(sql`case when c.locked_until > ${nowIso} then c.locked_until end`),
      num: sql`null`,
      caseExact: true,
    },
    failedlogins: { kind: "n", text: sql`null`, num: credential(sql`c.failed_logins`) },
    lastlogin: { kind: "s", text: credential(sql`c.last_login_at`), num: sql`null`, caseExact: true },
    passwordchangedat: { kind: "s", text: credential(sql`c.password_changed_at`), num: sql`null`, caseExact: true },
    firstlogin: {
      kind: "b",
      text: credential(sql`case c.first_login when 1 then 'true' else 'false' end`),
      num: sql`null`,
    },
    // as the representation shows it (resource-representation.ts): a User without a credentials
    // row has no password either
    passwordstate: {
      kind: "s",
      text: sql`(case when r.resource_type <> 'User' then null else coalesce(${credential(sql`case when c.password_hash is null then 'none' when c.first_login = 1 then 'temporary' else 'set' end`)}, 'none') end)`,
      num: sql`null`,
    },
    invited: {
      kind: "b",
      text: sql`(case when r.resource_type <> 'User' then null when (${INVITED}) = 1 then 'true' else 'false' end)`,
      num: sql`null`,
    },
    mfaenabled: {
      kind: "b",
      text: sql`(case when r.resource_type <> 'User' then null when (${MFA_ENABLED}) = 1 then 'true' else 'false' end)`,
      num: sql`null`,
    },
    serviceaccount: {
      kind: "b",
      text: sql`(case when r.resource_type <> 'User' then null when r.service_account = 1 then 'true' else 'false' end)`,
      num: sql`null`,
    },
    opensessions: {
      kind: "n",
      text: sql`null`,
      num: sql`(case when r.resource_type = 'User' then (select count(*) from sessions s where s.user_id = r.id and s.revoked_at is null and s.expires_at > ${nowIso}) end)`,
    },
  };
}

/**
 * Attributes a User keeps in a column the database derives (migration 0033), for a list of
 * Users alone: there they equal its values, and read an index in the list's order. Among other
 * types, whose attributes of the same name may be any shape, the values are read.
 */
const USER_COLUMNS = new Map<string, ValueColumns>(
  Object.entries({
    // no kind where there is none, so that `not (active eq true)` holds for a User without one
    active: {
      kind: sql`(case when r.user_active is null then '' else 'b' end)`,
      text: sql`r.user_active`,
      num: sql`null`,
    },
  }),
);

const TIMESTAMPS = new Set(["meta.created", "meta.lastmodified", "lockeduntil", "lastlogin", "passwordchangedat"]);

const valueColumns = (alias: string): ValueColumns => ({
  kind: sql.ref(`${alias}.kind`),
  text: sql.ref(`${alias}.text_value`),
  num: sql.ref(`${alias}.num_value`),
});

/**
 * Where `some` reads the values of a comparison from: all of resource_values, or on SQLite, for a
 * `co` or `ew` of three characters or more, only the rows its FTS5 trigram index (migration 0027)
 * says contain the text, case-insensitively, as the LIKE then decides. CROSS JOIN makes SQLite
 * read the index first: by its own estimates it would rather walk every value of the path.
 * PostgreSQL's planner reads its trigram index (0026) for the LIKE itself.
 */
function valueSource(dialect: Dialect, contained: string | undefined) {
  if (dialect !== "sqlite" || contained === undefined || [...contained].length < 3) return sql`resource_values v`;
  const phrase = `"${contained.replaceAll('"', '""')}"`;
  return sql`resource_values_trigram cross join resource_values v on v.id = resource_values_trigram.rowid and resource_values_trigram match ${phrase}`;
}

/** `emails co "x"` on a multi-valued complex attribute means its `value` sub-attribute. */
const candidatePaths = (path: string) => [path, `${path}.value`];

interface ElementScope {
  arrayPath: string;
}

/** `path` itself or anything under it: `name pr` holds when `name.familyName` has a value. */
const atOrUnder = (column: RawBuilder<unknown>, path: string) =>
  sql`(${column} = ${path} or (${column} >= ${`${path}.`} and ${column} < ${`${path}/`}))`;

const constant = (text: RawBuilder<unknown>): ValueColumns => ({ kind: "s", text, num: sql`null` });
const urn = (value: string) => constant(sql`${value.toLowerCase()}`);

/** `schemas` is not stored: it follows from the type, as in the representation. */
function schemasHave(predicate: (value: ValueColumns) => Condition): Condition {
  return sql`((r.resource_type = 'User' and (${predicate(urn(SCHEMA_URN.user))} or ${predicate(urn(SCHEMA_URN.enterpriseUser))})) or (r.resource_type = 'OAuthConsumer' and ${predicate(urn(SCHEMA_URN.oauthConsumer))}) or (r.resource_type not in ('User', 'OAuthConsumer') and ${predicate(constant(sql`lower(${SCHEMA_URN.custom("")} || r.resource_type)`))}))`;
}

/**
 * The filter target of resources at the time of a request (account state depends on it), on a
 * store; `usersOnly` when the list holds Users alone.
 */
export function resourcesTargetAt(nowIso: string, dialect: Dialect, usersOnly = false): FilterTarget {
  const account = new Map(Object.entries(accountColumns(nowIso)));
  const userColumns = usersOnly ? USER_COLUMNS : new Map<string, ValueColumns>();
  return {
    normalize(path, literal): Literal {
      const key = path.join(".");
      if (TIMESTAMPS.has(key) && typeof literal === "string") {
        const time = Date.parse(literal);
        if (Number.isNaN(time)) throw invalidFilter(`${key} needs an RFC 3339 date-time, not '${literal}'.`);
        // the columns hold toISOString(): compare like with like
        return new Date(time).toISOString();
      }
      // user names are stored in NFC: `josé` decomposed finds the User
      if (key === "username" && typeof literal === "string") return literal.normalize("NFC");
      return literal;
    },

    some(path, predicate, scope): Condition {
      const key = path.join(".");
      const elementScope = scope as ElementScope | undefined;
      if (!elementScope) {
        const column = COLUMNS.get(key) ?? account.get(key) ?? userColumns.get(key);
        if (column) return predicate(column);
        if (key === "schemas") return schemasHave(predicate);
        let contained: string | undefined;
        const condition = predicate({ ...valueColumns("v"), onContains: (text) => (contained = text) });
        return sql`r.id in (select v.resource_id from ${valueSource(dialect, contained)} where v.path in (${sql.join(candidatePaths(key))}) and v.kind <> 'e' and ${condition})`;
      }
      const inner = `${elementScope.arrayPath}.${key}`;
      const paths = key === "value" ? [inner, elementScope.arrayPath] : [inner];
      return sql`exists (select 1 from resource_values x where x.resource_id = e.resource_id and x.elem = e.elem and x.path in (${sql.join(paths)}) and x.kind <> 'e' and ${predicate(valueColumns("x"))})`;
    },

    present(path, scope): Condition {
      const key = path.join(".");
      const elementScope = scope as ElementScope | undefined;
      if (!elementScope) {
        const state = account.get(key) ?? userColumns.get(key);
        if (state) return sql`(${state.kind === "n" ? state.num : state.text}) is not null`;
        if (key === "externalid") return sql`r.external_id is not null`;
        if (COLUMNS.has(key) || key === "schemas") return sql`1=1`;
        return sql`r.id in (select v.resource_id from resource_values v where ${atOrUnder(sql.ref("v.path"), key)} and v.kind <> 'e')`;
      }
      const inner = `${elementScope.arrayPath}.${key}`;
      const paths =
        key === "value"
          ? sql`(${atOrUnder(sql.ref("x.path"), inner)} or x.path = ${elementScope.arrayPath})`
          : atOrUnder(sql.ref("x.path"), inner);
      return sql`exists (select 1 from resource_values x where x.resource_id = e.resource_id and x.elem = e.elem and ${paths} and x.kind <> 'e')`;
    },

    element(path, inner, scope): Condition {
      if (scope) throw invalidFilter("A value path cannot contain another value path.");
      const arrayPath = path.join(".");
      return sql`r.id in (select e.resource_id from resource_values e where e.path = ${arrayPath} and e.kind = 'e' and ${inner({ arrayPath } satisfies ElementScope)})`;
    },
  };
}

/** The order of a list: its keys, and whether they are never null and tell every two rows apart. */
export interface SortOrder {
  keys: RawBuilder<unknown>[];
  unique: boolean;
}

/**
 * Sort keys for `sortby`: a column when the attribute has one, else its smallest number, then its
 * smallest text. `usersOnly`: the list holds Users alone (`resourcetypes=User`).
 */
export function resourceSortKeys(path: string[], nowIso: string, usersOnly: boolean): SortOrder {
  const key = path.join(".");
  const column = COLUMNS.get(key);
  if (column) return { keys: [column.text], unique: false };
  const state = new Map(Object.entries(accountColumns(nowIso))).get(key);
  if (state) return { keys: [state.kind === "n" ? state.num : state.text], unique: false };
  // A User's userName is also its column user_name_key, unique, lower-cased as text_value is:
  // a list of Users alone walks the (resource_type, user_name_key) index and stops at the page
  if (key === "username" && usersOnly) return { keys: [sql`r.user_name_key`], unique: true };
  const number = sql`(select min(s.num_value) from resource_values s where s.resource_id = r.id and s.path in (${sql.join(candidatePaths(key))}))`;
  const text = sql`(select min(s.text_value) from resource_values s where s.resource_id = r.id and s.path in (${sql.join(candidatePaths(key))}))`;
  if (key === "username") {
    // among other types, a User still sorts on its column, not a look-up per row; a resource of
    // another type that holds a userName sorts on its value
    return {
      keys: [sql`(case when r.user_name_key is null then ${number} end)`, sql`coalesce(r.user_name_key, ${text})`],
      unique: false,
    };
  }
  return { keys: [number, text], unique: false };
}
