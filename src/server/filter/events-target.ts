import { type RawBuilder, sql } from "kysely";
import { EVENT_FIELDS } from "../../contract/events.js";
import {
  type Condition,
  type FilterTarget,
  invalidFilter,
  type Literal,
  literalKind,
  type ValueColumns,
  wrongKind,
} from "./compile.js";

const none = sql`null`;
type Column = ValueColumns & { present: RawBuilder<unknown> };
const has = (column: string) => sql`${sql.ref(`events.${column}`)} is not null`;
const text = (column: string): Column => ({
  kind: "s",
  text: sql`lower(${sql.ref(`events.${column}`)})`,
  num: none,
  present: has(column),
});
const time = (column: string): Column => ({
  kind: "s",
  text: sql.ref(`events.${column}`),
  num: none,
  caseExact: true,
  present: has(column),
});

/**
 * Event fields kept in columns of `events`; the JSON ones are reached with json_each. A Map: an
 * attribute of a filter is a plain name, `constructor` no more a column than `nosuch`.
 */
const COLUMNS = new Map<string, Column>(
  Object.entries({
    code: { kind: "s", text: sql.ref("events.code_key"), num: none, present: has("code_key") },
    name: text("name"),
    description: text("description"),
    type: text("type"),
    location: text("location"),
    organizer: text("organizer"),
    createdby: text("created_by"),
    startsat: time("starts_at"),
    endsat: time("ends_at"),
    createdat: time("created_at"),
    updatedat: time("updated_at"),
    allday: {
      kind: "b",
      text: sql`case events.all_day when 1 then 'true' when 0 then 'false' end`,
      num: none,
      present: has("all_day"),
    },
    version: { kind: "n", text: none, num: sql.ref("events.version"), present: has("version") },
  }),
);
const TIMESTAMPS = new Set(["startsat", "endsat", "createdat", "updatedat"]);
const ATTENDEE_FIELDS = new Set(["name", "email", "status"]);

/** The JSON columns (tags, attendees, customFields) are text; each database unpacks them its own way. */
interface JsonSql {
  /** rows `t(value)` of the strings of a JSON array column */
  strings(column: string): RawBuilder<unknown>;
  /** rows `a(value)` of the objects of a JSON array column */
  objects(column: string): RawBuilder<unknown>;
  /** a text member of one such object */
  member(alias: string, field: string): RawBuilder<unknown>;
  /** rows `c(key, value)` of the members of a JSON object column, `value` described by `scalar` */
  entries(column: string): RawBuilder<unknown>;
  scalar(alias: string): ValueColumns & { isNull: RawBuilder<unknown> };
}

const SQLITE_JSON: JsonSql = {
  strings: (column) => sql`json_each(${sql.ref(`events.${column}`)}) t`,
  objects: (column) => sql`json_each(${sql.ref(`events.${column}`)}) a`,
  member: (alias, field) => sql`json_extract(${sql.ref(`${alias}.value`)}, ${`$.${field}`})`,
  entries: (column) => sql`json_each(${sql.ref(`events.${column}`)}) c`,
  scalar: (alias) => ({
    kind: sql`case ${sql.ref(`${alias}.type`)} when 'text' then 's' when 'integer' then 'n' when 'real' then 'n' when 'true' then 'b' when 'false' then 'b' end`,
    text: sql`case when ${sql.ref(`${alias}.type`)} in ('true', 'false') then ${sql.ref(`${alias}.type`)} else lower(${sql.ref(`${alias}.value`)}) end`,
    num: sql.ref(`${alias}.value`),
    isNull: sql`${sql.ref(`${alias}.type`)} = 'null'`,
  }),
};

const POSTGRES_JSON: JsonSql = {
  strings: (column) => sql`jsonb_array_elements_text(${sql.ref(`events.${column}`)}::jsonb) as t(value)`,
  objects: (column) => sql`jsonb_array_elements(${sql.ref(`events.${column}`)}::jsonb) as a(value)`,
  member: (alias, field) => sql`(${sql.ref(`${alias}.value`)} ->> ${field})`,
  entries: (column) => sql`jsonb_each(${sql.ref(`events.${column}`)}::jsonb) as c(key, value)`,
  scalar: (alias) => {
    const type = sql`jsonb_typeof(${sql.ref(`${alias}.value`)})`;
    const text = sql`(${sql.ref(`${alias}.value`)} #>> '{}')`;
    return {
      kind: sql`case ${type} when 'string' then 's' when 'number' then 'n' when 'boolean' then 'b' end`,
      text: sql`lower(${text})`,
      num: sql`case when ${type} = 'number' then ${text}::double precision end`,
      isNull: sql`${type} = 'null'`,
    };
  },
};

function attendeeField(path: string[]): string {
  const field = path.length === 0 ? "email" : path.join(".");
  if (!ATTENDEE_FIELDS.has(field)) throw invalidFilter(`Attendees have name, email and status, not '${field}'.`);
  return field;
}

const attendeeValue = (json: JsonSql, alias: string, field: string): ValueColumns => ({
  kind: "s",
  text: sql`lower(${json.member(alias, field)})`,
  num: none,
});

/** An attendee without the field has no value to compare. */
const attendeeHas = (json: JsonSql, alias: string, field: string, predicate: (value: ValueColumns) => Condition) => {
  const value = attendeeValue(json, alias, field);
  return sql`(${value.text} is not null and ${predicate(value)})`;
};

/** The filter target of the events list, for the database in use. */
export function eventsTarget(dialect: "sqlite" | "postgres"): FilterTarget {
  const json = dialect === "postgres" ? POSTGRES_JSON : SQLITE_JSON;
  return {
    normalize(path, literal): Literal {
      const key = path.join(".");
      const column = COLUMNS.get(key);
      const name = EVENT_FIELDS.find((field) => field.toLowerCase() === key) ?? key;
      if (TIMESTAMPS.has(key) && literal !== null) {
        const parsed = typeof literal === "string" ? Date.parse(literal) : Number.NaN;
        if (Number.isNaN(parsed))
          throw invalidFilter(`${name} needs an RFC 3339 date-time, not ${JSON.stringify(literal)}.`);
        return new Date(parsed).toISOString();
      }
      // a comparison with a literal of another kind could match nothing: it is a mistake to say
      if (column && typeof column.kind === "string" && literal !== null && literalKind(literal) !== column.kind) {
        throw wrongKind(name, column.kind, literal);
      }
      return literal;
    },

    some(path, predicate, scope) {
      if (scope) return attendeeHas(json, "a", attendeeField(path), predicate);
      const [head, ...rest] = path;
      const column = rest.length === 0 && head ? COLUMNS.get(head) : undefined;
      // a column without a value has no value to compare (and no SQL null reaches a `not`)
      if (column) return sql`(${column.present} and ${predicate(column)})`;
      if (head === "tags" && rest.length === 0) {
        return sql`exists (select 1 from ${json.strings("tags")} where ${predicate({ kind: "s", text: sql`lower(t.value)`, num: none })})`;
      }
      if (head === "attendees") {
        return sql`exists (select 1 from ${json.objects("attendees")} where ${attendeeHas(json, "a", attendeeField(rest), predicate)})`;
      }
      if (head === "customfields" && rest.length === 1) {
        const value = json.scalar("c");
        return sql`exists (select 1 from ${json.entries("custom_fields")} where lower(c.key) = ${rest[0]} and not (${value.isNull}) and ${predicate(value)})`;
      }
      throw invalidFilter(`Events cannot be filtered by '${path.join(".")}'.`);
    },

    element(path, inner, scope) {
      if (scope || path.join(".") !== "attendees")
        throw invalidFilter("Only attendees[...] is a value path of events.");
      return sql`exists (select 1 from ${json.objects("attendees")} where ${inner("attendee")})`;
    },
  };
}
