// Section 4 of `npm run bench` (bench/run.mjs starts it as
// `node --import tsx bench/user-reads.mts DATA_DIR [POSTGRES_URL]`): server-side time of the User
// list reads an admin, a support person and an identity provider make, at a small and a large
// number of users, in-process, on SQLite (the file in DATA_DIR) or on the PostgreSQL database given.
//
// The app is built from the TypeScript sources (buildApp, log: false), the first admin is created,
// and users are seeded straight into the store, in one transaction per batch, with the rows the
// server's own createResource writes (the resources row, its indexed values, a password-less
// credential); then, as the /Bulk requests of a users import do, the planner's statistics are
// refreshed when the resources have grown (PostgreSQL). The users are user-00000 … user-99999
// (for 100 000), seeded in two phases: first every `stride`-th one (user-xxx21 for 1 000 of
// 100 000), measured, then all the others, measured again. So the looked-up user exists at both
// sizes and the co filter finds the same 10 users at both sizes; every 100th user is inactive.
// Only the amount of data around them changes.
//
// Each measure is the median wall time of app.inject() (the whole Fastify pipeline: routing,
// Bearer authentication, validation, the SQL, serialisation; no socket) over N sequential requests
// after a warm-up (a page of a filter alternating with its count=0). It prints progress on stderr
// and one JSON object on stdout, which run.mjs reports.
//
// Knobs: BENCH_FILTER_USERS (100000) the large size, BENCH_FILTER_SMALL (1000) the small one,
//   BENCH_FILTER_REQUESTS (100) measured requests per read and size; BENCH_USER_READS=search
//   measures the free-text searches of `users search` instead of the list reads (the users then
//   also hold a family name, the last four digits of their number: Family-4321).
import { buildApp } from "../src/server/app.js";
import { createFirstAdmin } from "../src/server/services/first-admin.js";
import { resourceId } from "../src/server/services/random-token.js";
import { insertResource, refreshStatisticsAfterGrowth } from "../src/server/store/resources-repo.js";
import { saveCredential } from "../src/server/store/users-repo.js";

function knob(name: string, fallback: number): number {
  const value = Number(process.env[name]);
  return Number.isInteger(value) && value > 0 ? value : fallback;
}
const LARGE = knob("BENCH_FILTER_USERS", 100_000);
const SMALL = Math.min(knob("BENCH_FILTER_SMALL", 1_000), LARGE);
const REQUESTS = knob("BENCH_FILTER_REQUESTS", 100);
const WARMUPS = 5;
const PASSWORD = "correct horse battery staple 42";
/** users per transaction: one transaction for the small phase, a few for the large one */
const BATCH = 25_000;

const [dataDir, databaseUrl] = process.argv.slice(2);
if (!dataDir) throw new Error("usage: node --import tsx bench/user-reads.mts DATA_DIR [POSTGRES_URL]");
const progress = (message: string) => process.stderr.write(`… ${message}\n`);

const stride = Math.floor(LARGE / SMALL);
const offset = Math.min(21, stride - 1);
const width = String(LARGE - 1).length;
const nameOf = (index: number) => `user-${String(index).padStart(width, "0")}`;
/** the first phase: every stride-th user, starting at `offset` */
const inFirstPhase = (index: number) => index % stride === offset && index < stride * SMALL;
const target = Math.floor(0.54321 * SMALL) * stride + offset; // 54321 for 1 000 of 100 000
const targetName = nameOf(target);
const isActive = (index: number) => Math.floor(index / stride) % 100 !== 7;

interface Read {
  key: string;
  /** the query string after `/Resources?`; `size` is the number of users seeded */
  query: (size: number) => string;
  /** totalResults expected at `size` users, when it is known in advance */
  expect?: (size: number) => number;
  /** shown without a target: a read whose cost is known to grow with the data */
  informational?: boolean;
  /** the read of this filter's total alone (`count=0`), which this page is held against at the large size */
  countOf?: string;
  /** it finds no user, on purpose */
  none?: boolean;
}

const users = "resourcetypes=User";

/** A page of 20 of a filter that matches a share of the users, and the same filter's total alone. */
function shareReads(name: string, text: string): Read[] {
  const countKey = `${name} (a tenth), count=0`;
  return [
    { key: countKey, query: () => `${filter(text)}&count=0`, informational: true },
    {
      key: `${name} (a tenth), count=20`,
      query: () => `${filter(text)}&count=20`,
      informational: true,
      countOf: countKey,
    },
  ];
}
const filter = (text: string) => `${users}&filter=${encodeURIComponent(text)}`;
const READS: Read[] = [
  { key: "page 1, sortBy=userName ascending", query: () => `${users}&sortby=userName&sortorder=ascending&count=20` },
  { key: "page 1, sortBy=userName descending", query: () => `${users}&sortby=userName&sortorder=descending&count=20` },
  { key: `userName eq "${targetName}"`, query: () => filter(`userName eq "${targetName}"`), expect: () => 1 },
  // a filter that matches a share of the users asks for as many as it finds at the small size, so
  // that both sizes answer the same page and only the count of the matches grows
  {
    key: `userName sw "${targetName.slice(0, -2)}", count=1`,
    query: () => `${filter(`userName sw "${targetName.slice(0, -2)}"`)}&count=1`,
  },
  {
    key: `emails eq "${targetName}@example.com"`,
    query: () => filter(`emails eq "${targetName}@example.com"`),
    expect: () => 1,
  },
  { key: `emails co "${targetName.slice(-4)}@"`, query: () => filter(`emails co "${targetName.slice(-4)}@"`) },
  { key: `externalId eq "ext-${target}"`, query: () => filter(`externalId eq "ext-${target}"`), expect: () => 1 },
  { key: "active eq false, count=10", query: () => `${filter("active eq false")}&count=10` },
  { key: "count=0 (the total only)", query: () => `${users}&count=0`, expect: (size) => size },
  // a filter that matches a tenth of the users: its page costs what counting its matches costs
  // (SCIM's exact totalResults), not more; its total grows with the users, so large/small is shown only
  ...shareReads("userName sw", `userName sw "user-${"0".repeat(Math.max(1, width - 4))}"`),
  ...shareReads("emails co", 'emails co "1@"'),
  { key: "a page near the end", query: (size) => `${users}&startindex=${Math.max(1, size - 100)}&count=20` },
  // an OFFSET is read from the nearer end: the middle is the deepest page, linear on both stores
  {
    key: "the page in the middle",
    query: (size) => `${users}&startindex=${Math.floor(size / 2)}&count=20`,
    informational: true,
  },
];

const search = (text: string) => `${users}&search=${encodeURIComponent(text)}`;
/**
 * What a help desk types into `users search`: a whole user name, part of an e-mail, a family
 * name, an externalId, a display name, nothing anyone has; each finds the same users at both
 * sizes. Two characters and a text every user holds find a share of the directory, whose count
 * grows with it (asked for one page of 20).
 */
const SEARCHES: Read[] = [
  { key: `search "${targetName}" (an exact user name)`, query: () => search(targetName), expect: () => 1 },
  {
    key: `search "${targetName.slice(-4)}@exam" (part of an e-mail)`,
    query: () => search(`${targetName.slice(-4)}@exam`),
  },
  { key: `search "family-${targetName.slice(-4)}"`, query: () => search(`family-${targetName.slice(-4)}`) },
  { key: `search "EXT-${target}" (an externalId)`, query: () => search(`EXT-${target}`), expect: () => 1 },
  { key: `search "User ${target}" (a display name)`, query: () => search(`User ${target}`), expect: () => 1 },
  { key: `search "nobody-here"`, query: () => search("nobody-here"), expect: () => 0, none: true },
  { key: `search "us", count=20`, query: () => `${search("us")}&count=20`, informational: true },
  { key: `search "example.com", count=20`, query: () => `${search("example.com")}&count=20`, informational: true },
];
const SEARCHING = process.env.BENCH_USER_READS === "search";
const MEASURED = SEARCHING ? SEARCHES : READS;

const app = await buildApp({
  dataDir,
  log: false,
  ...(databaseUrl ? { databaseUrl, secretKey: Buffer.alloc(32, 11).toString("base64") } : {}),
});
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
          const id = resourceId(now);
          const attributes = {
            userName,
            externalId: `ext-${index}`,
            displayName: `User ${index}`,
            active: isActive(index),
            roles: [{ value: "member" }],
            emails: [{ value: `${userName}@example.com`, type: "work" }],
            ...(SEARCHING && { name: { givenName: "Pat", familyName: `Family-${userName.slice(-4)}` } }),
          };
          await insertResource(trx, {
            id,
            resource_type: "User",
            external_id: attributes.externalId,
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
    // what a users import's /Bulk requests do after their creates
    await refreshStatisticsAfterGrowth(db, app.services.store.dialect);
    return (performance.now() - started) / 1000;
  }

  /** One request of `read` at `size` users: its time, and its totalResults. */
  async function timeOne(read: Read, size: number) {
    const url = `/Resources?${read.query(size)}`;
    const started = performance.now();
    const response = await app.inject({ method: "GET", url, headers: { authorization } });
    const elapsed = performance.now() - started;
    if (response.statusCode !== 200) {
      throw new Error(`GET ${url} at ${size} users answered ${response.statusCode}: ${response.body.slice(0, 300)}`);
    }
    return { elapsed, totalResults: () => (response.json() as { totalResults: number }).totalResults };
  }

  // A page held against its own count (`countOf`) is timed alternating with it, request by
  // request, so that the machine's load drifting between the two reads weighs on both alike.
  const groups = MEASURED.filter((read) => !read.countOf).map((read) => [
    read,
    ...MEASURED.filter((page) => page.countOf === read.key),
  ]);

  async function measure(size: number) {
    const results: Record<string, { medianMs: number; p90Ms: number; totalResults: number }> = {};
    for (const group of groups) {
      const times = group.map(() => [] as number[]);
      const totals = group.map(() => -1);
      for (let i = 0; i < WARMUPS + REQUESTS; i++) {
        for (const [k, read] of group.entries()) {
          const { elapsed, totalResults } = await timeOne(read, size);
          if (i === 0) totals[k] = totalResults();
          if (i >= WARMUPS) times[k]!.push(elapsed);
        }
      }
      for (const [k, read] of group.entries()) {
        const totalResults = totals[k]!;
        const expected = read.expect?.(size);
        if (expected !== undefined && totalResults !== expected) {
          throw new Error(`${read.key} found ${totalResults} users at ${size} users, expected ${expected}`);
        }
        if (totalResults < 1 && !read.none) throw new Error(`${read.key} found no user at ${size} users`);
        const sorted = times[k]!.sort((a, b) => a - b);
        const q = (p: number) => sorted[Math.min(sorted.length - 1, Math.floor((sorted.length - 1) * p))]!;
        results[read.key] = { medianMs: q(0.5), p90Ms: q(0.9), totalResults };
      }
    }
    return results;
  }

  const first: number[] = [];
  const rest: number[] = [];
  for (let index = 0; index < LARGE; index++) (inFirstPhase(index) ? first : rest).push(index);

  progress(`user reads: seeding ${first.length} users`);
  const seedSmall = await seed(first);
  progress(`user reads: measuring at ${first.length + 1} users`);
  const small = await measure(first.length + 1);
  progress(`user reads: seeding ${rest.length} more users`);
  const seedLarge = await seed(rest);
  progress(`user reads: measuring at ${LARGE + 1} users`);
  const large = await measure(LARGE + 1);

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
      store: app.services.store.dialect,
      sizes: { small: first.length, large: LARGE },
      resources: Number(counts.n),
      resourceValues: Number(values.n),
      seedSeconds: { small: seedSmall, large: seedLarge },
      reads: MEASURED.map((r) => ({
        key: r.key,
        small: small[r.key],
        large: large[r.key],
        ...(r.informational && { informational: true }),
        ...(r.countOf && { countOf: r.countOf }),
      })),
    })}\n`,
  );
} finally {
  await app.close();
}
