// Databases of their own on the machine's PostgreSQL (BIZCTL_TEST_POSTGRES_URL, default
// postgres://postgres@127.0.0.1:5432/postgres) for the measures that run on it: made for the run,
// dropped after it (dropDatabases, from the harness's clean-up).
import pg from "pg";

export const POSTGRES_URL = process.env.BIZCTL_TEST_POSTGRES_URL ?? "postgres://postgres@127.0.0.1:5432/postgres";

/** A deployment secret for the servers on PostgreSQL (every instance of one deployment shares it). */
export const POSTGRES_SECRET_KEY = Buffer.alloc(32, 11).toString("base64");

const created = new Set();

async function maintenance(statement) {
  const client = new pg.Client(POSTGRES_URL);
  await client.connect();
  try {
    await client.query(statement);
  } finally {
    await client.end();
  }
}

/** A new empty database; its URL. */
export async function createDatabase(kind) {
  const name = `bizctl_${kind}_${process.pid}_${Date.now()}`;
  await maintenance(`create database ${name}`);
  created.add(name);
  const url = new URL(POSTGRES_URL);
  url.pathname = `/${name}`;
  return url.toString();
}

export async function dropDatabases() {
  for (const name of created) await maintenance(`drop database if exists ${name} with (force)`);
  created.clear();
}
