// Seeds a data dir made by `server init` with EVENTS events and USERS users, straight into its
// store, writing the rows the server itself keeps: events; for users the resources row, its
// indexed values (flattenValues, the app's own function) and a password-less credential. One
// transaction of prepared multi-row inserts, in chunks: into the SQLite file (better-sqlite3), or,
// given DATABASE_URL, into the PostgreSQL database `server init --database` prepared (pg).
// Usage: node --import tsx bench/seed-events.mts DATA_DIR EVENTS USERS [DATABASE_URL]
// Events are EV-0000001 …: five types in turn, about three per start minute (ties on startsAt).
// With SEED_EVENTS_NDJSON=FILE the events are not inserted but written to FILE as `events import`
// reads them (the same events), for a database whose events come from an import.
import { once } from "node:events";
import { createWriteStream } from "node:fs";
import { join } from "node:path";
import Database from "better-sqlite3";
import pg from "pg";
import { resourceId } from "../src/server/services/random-token.js";
import { flattenValues } from "../src/server/store/resources-repo.js";

const [dataDir, eventsText, usersText, databaseUrl] = process.argv.slice(2);
if (!dataDir) throw new Error("usage: node --import tsx bench/seed-events.mts DATA_DIR EVENTS USERS [DATABASE_URL]");
const EVENTS = Number(eventsText);
const USERS = Number(usersText);
const CHUNK = 500;
export const TYPES = ["webinar", "meeting", "conference", "call", "visit"];

/** Runs one statement with positional parameters; begin() and commit() bound the writing. */
interface Store {
  run(sql: string, parameters: unknown[]): Promise<void>;
  begin(): Promise<void>;
  /** after each chunk: PostgreSQL commits and begins again (see openStore) */
  chunkDone(): Promise<void>;
  commit(): Promise<void>;
}

async function openStore(): Promise<Store> {
  if (databaseUrl) {
    const client = new pg.Client({ connectionString: databaseUrl });
    await client.connect();
    return {
      run: async (sql, parameters) => {
        let n = 0;
        await client.query({ text: sql.replace(/\?/g, () => `$${++n}`), values: parameters });
      },
      begin: async () => {
        await client.query("begin");
      },
      // the count triggers update one row per event: in one transaction PostgreSQL keeps every
      // version of that row and walks them all at each update, so a million events in one
      // transaction took hours; a commit per chunk lets it prune them
      chunkDone: async () => {
        await client.query("commit");
        await client.query("begin");
      },
      commit: async () => {
        await client.query("commit");
        // an import's events are left for the import's own statistics (a fresh database has none)
        await client.query(
          process.env.SEED_EVENTS_NDJSON ? "analyze resources, resource_values, credentials" : "analyze",
        );
        await client.end();
      },
    };
  }
  const db = new Database(join(dataDir!, "bizctl.db"), { fileMustExist: true });
  db.pragma("journal_mode = WAL");
  db.pragma("synchronous = OFF");
  const statements = new Map<string, Database.Statement>();
  return {
    run: async (sql, parameters) => {
      let statement = statements.get(sql);
      if (!statement) {
        statement = db.prepare(sql);
        statements.set(sql, statement);
      }
      statement.run(parameters);
    },
    begin: async () => {
      db.exec("begin");
    },
    chunkDone: async () => {},
    commit: async () => {
      db.exec("commit");
      db.pragma("wal_checkpoint(TRUNCATE)");
      db.close();
    },
  };
}

const store = await openStore();

/** `insert ... values (?, ...), (?, ...)` for `rows` rows. */
function inserter(table: string, columns: string[]) {
  const row = `(${columns.map(() => "?").join(", ")})`;
  return async (rows: unknown[][]) => {
    if (rows.length === 0) return;
    const values = Array(rows.length).fill(row).join(", ");
    await store.run(`insert into ${table} (${columns.join(", ")}) values ${values}`, rows.flat());
  };
}

const EVENT_COLUMNS = [
  "code_key",
  "code",
  "name",
  "description",
  "type",
  "starts_at",
  "ends_at",
  "all_day",
  "location",
  "organizer",
  "attendees",
  "tags",
  "custom_fields",
  "created_at",
  "updated_at",
  "created_by",
  "version",
];
const insertEvents = inserter("events", EVENT_COLUMNS);
const insertResources = inserter("resources", [
  "id",
  "resource_type",
  "external_id",
  "display_name",
  "user_name_key",
  "attributes",
  "created_at",
  "updated_at",
  "version",
]);
const insertValues = inserter("resource_values", ["resource_id", "path", "elem", "kind", "text_value", "num_value"]);
const insertCredentials = inserter("credentials", [
  "user_id",
  "password_hash",
  "first_login",
  "failed_logins",
  "updated_at",
]);

const base = Date.parse("2027-01-01T00:00:00Z");
const minutes = Math.max(1, Math.ceil(EVENTS / 3));
const now = new Date().toISOString();

function eventRow(i: number): unknown[] {
  const code = `EV-${String(i).padStart(7, "0")}`;
  const startsAt = base + ((i * 7919) % minutes) * 60_000;
  return [
    code.toLowerCase(),
    code,
    `Event ${i}`,
    null,
    TYPES[i % TYPES.length],
    new Date(startsAt).toISOString(),
    new Date(startsAt + 3_600_000).toISOString(),
    0,
    `Room ${i % 50}`,
    `organizer-${i % 100}`,
    JSON.stringify([{ name: "Ann", email: "ann@example.com" }]),
    JSON.stringify(["bench"]),
    null,
    now,
    now,
    "admin",
    1,
  ];
}

/** The event of eventRow(i) as an `events import` line. */
function eventLine(i: number): string {
  const [, code, name, , type, startsAt, endsAt, , location, organizer] = eventRow(i) as string[];
  const attendees = [{ name: "Ann", email: "ann@example.com" }];
  const event = { code, name, type, startsAt, endsAt, allDay: false, location, organizer, attendees, tags: ["bench"] };
  return `${JSON.stringify(event)}\n`;
}

async function writeEvents(file: string): Promise<void> {
  const out = createWriteStream(file);
  for (let i = 1; i <= EVENTS; i++) if (!out.write(eventLine(i))) await once(out, "drain");
  out.end();
  await once(out, "finish");
}

const NDJSON = process.env.SEED_EVENTS_NDJSON;
const started = performance.now();
if (NDJSON) await writeEvents(NDJSON);
await store.begin();
for (let i = 1; !NDJSON && i <= EVENTS; i += CHUNK) {
  const rows: unknown[][] = [];
  for (let j = i; j < Math.min(i + CHUNK, EVENTS + 1); j++) rows.push(eventRow(j));
  await insertEvents(rows);
  await store.chunkDone();
}
for (let i = 0; i < USERS; i += CHUNK) {
  const resources: unknown[][] = [];
  const values: unknown[][] = [];
  const credentials: unknown[][] = [];
  for (let j = i; j < Math.min(i + CHUNK, USERS); j++) {
    const userName = `user-${String(j).padStart(6, "0")}`;
    const id = resourceId(new Date());
    const attributes = {
      userName,
      displayName: `User ${j}`,
      active: true,
      roles: [{ value: "member" }],
      emails: [{ value: `${userName}@example.com`, type: "work" }],
    };
    resources.push([id, "User", null, attributes.displayName, userName, JSON.stringify(attributes), now, now, 1]);
    for (const v of flattenValues(attributes)) values.push([id, v.path, v.elem, v.kind, v.text_value, v.num_value]);
    credentials.push([id, null, 1, 0, now]);
  }
  await insertResources(resources);
  for (let k = 0; k < values.length; k += CHUNK) await insertValues(values.slice(k, k + CHUNK));
  await insertCredentials(credentials);
  await store.chunkDone();
}
await store.commit();
process.stdout.write(
  `${JSON.stringify({ events: EVENTS, users: USERS, seconds: (performance.now() - started) / 1000 })}\n`,
);
