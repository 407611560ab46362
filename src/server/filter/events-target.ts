import { type RawBuilder, sql } from "kysely";
import { type Condition, type FilterTarget, invalidFilter, type Literal, type ValueColumns } from "./compile.js";

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

/** Event fields kept in columns of `events`; the JSON ones are reached with json_each. */
const COLUMNS: Record<string, Column> = {
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
};
const TIMESTAMPS = new Set(["startsat", "endsat", "createdat", "updatedat"]);
const ATTENDEE_FIELDS = new Set(["name", "email", "status"]);

const jsonValue = (alias: string): ValueColumns => ({
  kind: sql`case ${sql.ref(`${alias}.type`)} when 'text' then 's' when 'integer' then 'n' when 'real' then 'n' when 'true' then 'b' when 'false' then 'b' end`,
  text: sql`case when ${sql.ref(`${alias}.type`)} in ('true', 'false') then ${sql.ref(`${alias}.type`)} else lower(${sql.ref(`${alias}.value`)}) end`,
  num: sql.ref(`${alias}.value`),
});

function attendeeField(path: string[]): string {
  const field = path.length === 0 ? "email" : path.join(".");
  if (!ATTENDEE_FIELDS.has(field)) throw invalidFilter(`Attendees have name, email and status, not '${field}'.`);
  return field;
}

const attendeeValue = (alias: string, field: string): ValueColumns => ({
  kind: "s",
  text: sql`lower(json_extract(${sql.ref(`${alias}.value`)}, ${`$.${field}`}))`,
  num: none,
});

/** An attendee without the field has no value to compare. */
const attendeeHas = (alias: string, field: string, predicate: (value: ValueColumns) => Condition) => {
  const value = attendeeValue(alias, field);
  return sql`(${value.text} is not null and ${predicate(value)})`;
};

export const eventsTarget: FilterTarget = {
  normalize(path, literal): Literal {
    const key = path.join(".");
    if (TIMESTAMPS.has(key) && typeof literal === "string") {
      const parsed = Date.parse(literal);
      if (Number.isNaN(parsed)) throw invalidFilter(`${key} needs an RFC 3339 date-time, not '${literal}'.`);
      return new Date(parsed).toISOString();
    }
    return literal;
  },

  some(path, predicate, scope) {
    if (scope) return attendeeHas("a", attendeeField(path), predicate);
    const [head, ...rest] = path;
    const column = rest.length === 0 && head ? COLUMNS[head] : undefined;
    // a column without a value has no value to compare (and no SQL null reaches a `not`)
    if (column) return sql`(${column.present} and ${predicate(column)})`;
    if (head === "tags" && rest.length === 0) {
      return sql`exists (select 1 from json_each(events.tags) t where ${predicate({ kind: "s", text: sql`lower(t.value)`, num: none })})`;
    }
    if (head === "attendees") {
      return sql`exists (select 1 from json_each(events.attendees) a where ${attendeeHas("a", attendeeField(rest), predicate)})`;
    }
    if (head === "customfields" && rest.length === 1) {
      return sql`exists (select 1 from json_each(events.custom_fields) c where lower(c.key) = ${rest[0]} and c.type <> 'null' and ${predicate(jsonValue("c"))})`;
    }
    throw invalidFilter(`Events cannot be filtered by '${path.join(".")}'.`);
  },

  element(path, inner, scope) {
    if (scope || path.join(".") !== "attendees") throw invalidFilter("Only attendees[...] is a value path of events.");
    return sql`exists (select 1 from json_each(events.attendees) a where ${inner("attendee")})`;
  },
};
