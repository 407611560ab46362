// Section 4 of `npm run bench` (bench/run.mjs starts it as `node --import tsx bench/filters.mts DATA_DIR`):
// server-side time of GET /Resources?filter=... at a small and a large number of users, in-process.
//
// The app is built from the TypeScript sources (buildApp, log: false) on DATA_DIR, the first admin is
// created, and users are seeded straight into the store, in one transaction per batch, with the rows
// the server's own createResource writes (the resources row, its indexed values, a password-less
// credential). The users are user-00000 … user-99999 (for 100 000), seeded in two phases: first every
// `stride`-th one (user-xxx21 for 1 000 of 100 000), measured, then all the others, measured again.
// So the looked-up user exists at both sizes and the co filter finds the same 10 users at both sizes:
// only the amount of data around them changes.
//
// Each measure is the median wall time of app.inject() (the whole Fastify pipeline: routing,
// Bearer authentication, validation, the SQL, serialisation; no socket) over N sequential requests
// after a warm-up. It prints progress on stderr and one JSON object on stdout, which run.mjs reports.
//
// Knobs: BENCH_FILTER_USERS (100000) the large size, BENCH_FILTER_SMALL (1000) the small one,
//   BENCH_FILTER_EQ (200) and BENCH_FILTER_CO (30) measured requests per filter and size.
import { buildApp } from "../src/server/app.js";
import { createFirstAdmin } from "../src/server/services/first-admin.js";
import { insertResource } from "../src/server/store/resources-repo.js";
import { saveCredential } from "../src/server/store/users-repo.js";

function knob(name: string, fallback: number): number {
  const value = Number(process.env[name]);
  return Number.isInteger(value) && value > 0 ? value : fallback;
}
const LARGE = knob("BENCH_FILTER_USERS", 100_000);
const SMALL = Math.min(knob("BENCH_FILTER_SMALL", 1_000), LARGE);
const EQ_REQUESTS = knob("BENCH_FILTER_EQ", 200);
const CO_REQUESTS = knob("BENCH_FILTER_CO", 30);
const PASSWORD = "correct horse battery staple 42";
/** users per transaction: one transaction for the small phase, a few for the large one */
const BATCH = 25_000;

const dataDir = process.argv[2];
if (!dataDir) throw new Error("usage: node --import tsx bench/filters.mts DATA_DIR");
const progress = (message: string) => process.stderr.write(`… ${message}\n`);

const stride = Math.floor(LARGE / SMALL);
const offset = Math.min(21, stride - 1);
const width = String(LARGE - 1).length;
const nameOf = (index: number) => `user-${String(index).padStart(width, "0")}`;
/** the first phase: every stride-th user, starting at `offset` */
const inFirstPhase = (index: number) => index % stride === offset && index < stride * SMALL;
const target = Math.floor(0.54321 * SMALL) * stride + offset; // 54321 for 1 000 of 100 000
const targetName = nameOf(target);
const coLiteral = `${targetName.slice(-4)}@`;

const FILTERS = [
  { key: "eq", filter: `userName eq "${targetName}"`, requests: EQ_REQUESTS, warmups: 20 },
  { key: "co", filter: `emails.value co "${coLiteral}"`, requests: CO_REQUESTS, warmups: 3 },
] as const;

const app = await buildApp({ dataDir, log: false });
try {
  await createFirstAdmin(app.services, { userName: "admin", password: PASSWORD, temporary: false });
  const login = await app.inject({
    method: "POST",
    url: "/auth/login",
    payload: { userName: "admin", password: PASSWORD },
  });
  if (login.statusCode !== 200) throw new Error(`login answered ${login.statusCode}: ${login.body}`);
  const authorization = `Bearer ${(login.json() as { token: string }).token}`;
  const db = app.services.store.db;

  /** Inserts these users as createResource would, BATCH per transaction; returns the seconds it took. */
  async function seed(indices: number[]): Promise<number> {
    const started = performance.now();
    for (let i = 0; i < indices.length; i += BATCH) {
      const now = new Date();
      const iso = now.toISOString();
      await db.transaction().execute(async (trx) => {
        for (const index of indices.slice(i, i + BATCH)) {
          const userName = nameOf(index);
          const id = crypto.randomUUID();
          const attributes = {
            userName,
            displayName: `User ${index}`,
            active: true,
            roles: [{ value: "member" }],
            emails: [{ value: `${userName}@example.com`, type: "work" }],
          };
          await insertResource(trx, {
            id,
            resource_type: "User",
            external_id: null,
            display_name: attributes.displayName,
            user_name_key: userName.toLowerCase(),
            attributes: JSON.stringify(attributes),
            created_at: iso,
            updated_at: iso,
            version: 1,
          });
          await saveCredential(trx, id, { passwordHash: null, firstLogin: true }, now);
        }
      });
    }
    return (performance.now() - started) / 1000;
  }

  async function measure(size: number) {
    const results: Record<string, { medianMs: number; p90Ms: number; requests: number; totalResults: number }> = {};
    for (const f of FILTERS) {
      const url = `/Resources?filter=${encodeURIComponent(f.filter)}`;
      const times: number[] = [];
      let totalResults = -1;
      for (let i = 0; i < f.warmups + f.requests; i++) {
        const started = performance.now();
        const response = await app.inject({ method: "GET", url, headers: { authorization } });
        const elapsed = performance.now() - started;
        if (response.statusCode !== 200) {
          throw new Error(
            `GET ${url} at ${size} users answered ${response.statusCode}: ${response.body.slice(0, 300)}`,
          );
        }
        if (i === 0) totalResults = (response.json() as { totalResults: number }).totalResults;
        if (i >= f.warmups) times.push(elapsed);
      }
      if (f.key === "eq" && totalResults !== 1) {
        throw new Error(`${f.filter} found ${totalResults} users at ${size} users, expected exactly 1`);
      }
      if (f.key === "co" && totalResults < 1) throw new Error(`${f.filter} found no user at ${size} users`);
      times.sort((a, b) => a - b);
      const q = (p: number) => times[Math.min(times.length - 1, Math.floor((times.length - 1) * p))]!;
      results[f.key] = { medianMs: q(0.5), p90Ms: q(0.9), requests: f.requests, totalResults };
    }
    return results;
  }

  const first: number[] = [];
  const rest: number[] = [];
  for (let index = 0; index < LARGE; index++) (inFirstPhase(index) ? first : rest).push(index);

  progress(`filters: seeding ${first.length} users`);
  const seedSmall = await seed(first);
  progress(`filters: measuring at ${first.length + 1} users`);
  const small = await measure(first.length);
  progress(`filters: seeding ${rest.length} more users`);
  const seedLarge = await seed(rest);
  progress(`filters: measuring at ${LARGE + 1} users`);
  const large = await measure(LARGE);

  const counts = await db
    .selectFrom("resources")
    .select((eb) => eb.fn.countAll<number>().as("n"))
    .executeTakeFirstOrThrow();
  const values = await db
    .selectFrom("resource_values")
    .select((eb) => eb.fn.countAll<number>().as("n"))
    .executeTakeFirstOrThrow();
  process.stdout.write(
    `${JSON.stringify({
      sizes: { small: first.length, large: LARGE },
      resources: Number(counts.n),
      resourceValues: Number(values.n),
      seedSeconds: { small: seedSmall, large: seedLarge },
      filters: FILTERS.map((f) => ({ key: f.key, filter: f.filter, small: small[f.key], large: large[f.key] })),
    })}\n`,
  );
} finally {
  await app.close();
}
