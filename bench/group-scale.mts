// The groups measure of `npm run bench` (bench/measures/groups-scale.mjs starts it as
// `node --import tsx bench/group-scale.mts DATA_DIR [POSTGRES_URL]`): what a group's size and a
// User's number of groups cost, in-process, on SQLite (the file in DATA_DIR) or on the PostgreSQL
// database given.
//
// Users are seeded straight into the store (the rows createResource writes), then, through
// app.inject() as an admin (the whole Fastify pipeline, no socket):
//   - a group of MEMBERS (10 000) is built in PATCHes of 1 000 adds, each timed (reported); then a
//     PATCH of 1 000 adds (and one of 1 000 removes, taking them out again) into that group of 9 000
//     against the same into an empty group, alternating, median of ROUNDS each;
//   - a group read without its members (`excludedAttributes=members`) of that group against one
//     of 10 members, alternating, median of READS each;
//   - a User in GROUPS (100) groups against a User in 1: one membership change of it (add to and
//     remove from another group, alternating) and a request it makes itself (`GET /auth/isLogged`,
//     which reads its effective roles, as every authenticated request does), medians of READS each.
// It prints progress on stderr and one JSON object on stdout.
//
// Knobs: BENCH_GROUP_MEMBERS (10000), BENCH_GROUPS_OF_USER (100), BENCH_GROUP_READS (200),
//   BENCH_GROUP_ROUNDS (15).
import { buildApp } from "../src/server/app.js";
import { createFirstAdmin } from "../src/server/services/first-admin.js";
import { hashPassword } from "../src/server/services/passwords.js";
import { resourceId } from "../src/server/services/random-token.js";
import { insertResource, refreshStatisticsAfterGrowth } from "../src/server/store/resources-repo.js";
import { saveCredential } from "../src/server/store/users-repo.js";

function knob(name: string, fallback: number): number {
  const value = Number(process.env[name]);
  return Number.isInteger(value) && value > 0 ? value : fallback;
}
const MEMBERS = Math.max(2_000, Math.ceil(knob("BENCH_GROUP_MEMBERS", 10_000) / 1_000) * 1_000);
const GROUPS = knob("BENCH_GROUPS_OF_USER", 100);
const READS = knob("BENCH_GROUP_READS", 200);
const ROUNDS = knob("BENCH_GROUP_ROUNDS", 15);
const PATCH_SIZE = 1_000;
const WARMUPS = 10;
const PASSWORD = "correct horse battery staple 42";
const GROUP = "urn:ietf:params:scim:schemas:core:2.0:Group";
const PATCH_OP = "urn:ietf:params:scim:api:messages:2.0:PatchOp";

const [dataDir, databaseUrl] = process.argv.slice(2);
if (!dataDir) throw new Error("usage: node --import tsx bench/group-scale.mts DATA_DIR [POSTGRES_URL]");
const progress = (message: string) => process.stderr.write(`… ${message}\n`);
const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor((values.length - 1) / 2)] as number;

const app = await buildApp({
  dataDir,
  log: false,
  loginRateLimit: { max: 1_000_000, timeWindowMs: 60_000 },
  ...(databaseUrl ? { databaseUrl, secretKey: Buffer.alloc(32, 11).toString("base64") } : {}),
});
try {
  await createFirstAdmin(app.services, { userName: "admin", password: PASSWORD, temporary: false });
  const bearer = async (userName: string) => {
    const login = await app.inject({ method: "POST", url: "/auth/login", payload: { userName, password: PASSWORD } });
    if (login.statusCode !== 200) throw new Error(`login of ${userName} answered ${login.statusCode}: ${login.body}`);
    return `Bearer ${(login.json() as { token: string }).token}`;
  };
  const admin = await bearer("admin");
  const db = app.services.store.db;

  /** A request as `authorization`, timed; refused unless its status is `status`. */
  async function timed(authorization: string, method: "GET" | "POST" | "PATCH", url: string, payload?: object) {
    const started = performance.now();
    const response = await app.inject({ method, url, headers: { authorization }, ...(payload && { payload }) });
    const elapsed = performance.now() - started;
    if (response.statusCode >= 300)
      throw new Error(`${method} ${url} answered ${response.statusCode}: ${response.body}`);
    return { elapsed, response };
  }

  progress(`groups: seeding ${MEMBERS} users`);
  const hash = await hashPassword(PASSWORD);
  const ids: string[] = [];
  await db.transaction().execute(async (trx) => {
    const now = new Date();
    for (let index = 0; index < MEMBERS; index++) {
      const userName = `member-${String(index).padStart(5, "0")}`;
      const id = resourceId(now);
      const attributes = { userName, displayName: userName, active: true, roles: [{ value: "member" }] };
      await insertResource(trx, {
        id,
        resource_type: "User",
        external_id: null,
        display_name: userName,
        user_name_key: userName,
        attributes: JSON.stringify(attributes),
        created_at: now.toISOString(),
        updated_at: now.toISOString(),
        version: 1,
      });
      // the first two log in: the User in many groups and the User in one
      await saveCredential(trx, id, { passwordHash: index < 2 ? hash : null, firstLogin: false }, now);
      ids.push(id);
    }
  });
  await refreshStatisticsAfterGrowth(db, app.services.store.dialect);

  const createGroup = async (displayName: string) =>
    ((await timed(admin, "POST", "/Groups", { schemas: [GROUP], displayName })).response.json() as { id: string }).id;
  const changeMembers = (op: "add" | "remove", group: string, members: string[]) =>
    timed(admin, "PATCH", `/Groups/${group}`, {
      schemas: [PATCH_OP],
      Operations: [{ op, path: "members", value: members.map((value) => ({ value })) }],
    });
  const addMembers = (group: string, members: string[]) => changeMembers("add", group, members);

  progress(`groups: building a group of ${MEMBERS} members in PATCHes of ${PATCH_SIZE}`);
  const big = await createGroup("Everyone");
  const patchMs: number[] = [];
  for (let start = 0; start < MEMBERS - PATCH_SIZE; start += PATCH_SIZE) {
    patchMs.push((await addMembers(big, ids.slice(start, start + PATCH_SIZE))).elapsed);
  }
  progress(
    `groups: ${ROUNDS} rounds of ${PATCH_SIZE} adds and removes, into the group of ${MEMBERS - PATCH_SIZE} and an empty one`,
  );
  const empty = await createGroup("Empty");
  const last = ids.slice(MEMBERS - PATCH_SIZE);
  const churn: Record<"big" | "empty", { add: number[]; remove: number[] }> = {
    big: { add: [], remove: [] },
    empty: { add: [], remove: [] },
  };
  for (let round = 0; round < ROUNDS + 1; round++) {
    for (const [key, id] of (round % 2 === 0
      ? [
          ["empty", empty],
          ["big", big],
        ]
      : [
          ["big", big],
          ["empty", empty],
        ]) as ["big" | "empty", string][]) {
      const added = await changeMembers("add", id, last);
      const removed = await changeMembers("remove", id, last);
      if (round > 0) {
        churn[key].add.push(added.elapsed);
        churn[key].remove.push(removed.elapsed);
      }
    }
  }
  // the group's last PATCH, which makes it MEMBERS
  patchMs.push((await addMembers(big, last)).elapsed);
  const small = await createGroup("Few");
  await addMembers(small, ids.slice(0, 10));

  progress(`groups: reading each group without its members, ${READS} times`);
  const readMs: Record<"small" | "big", number[]> = { small: [], big: [] };
  for (let i = 0; i < WARMUPS + READS; i++) {
    for (const [key, id] of (i % 2 === 0
      ? [
          ["small", small],
          ["big", big],
        ]
      : [
          ["big", big],
          ["small", small],
        ]) as ["small" | "big", string][]) {
      const { elapsed } = await timed(admin, "GET", `/Groups/${id}?excludedAttributes=members`);
      if (i >= WARMUPS) readMs[key].push(elapsed);
    }
  }

  progress(`groups: a User in ${GROUPS} groups against a User in 1`);
  const [many, one] = [ids[0] as string, ids[1] as string];
  for (let index = 0; index < GROUPS - 2; index++) await addMembers(await createGroup(`Team ${index}`), [many]);
  // each is in Everyone and Few already (the first 10 members)
  const moved = await createGroup("Moving");
  const userMs: Record<"many" | "one", { change: number[]; me: number[] }> = {
    many: { change: [], me: [] },
    one: { change: [], me: [] },
  };
  // `one` is in Everyone and Few too: it leaves Few, and is in one group
  await timed(admin, "PATCH", `/Groups/${small}`, {
    schemas: [PATCH_OP],
    Operations: [{ op: "remove", path: `members[value eq "${one}"]` }],
  });
  const tokens = { many: await bearer("member-00000"), one: await bearer("member-00001") };
  for (let i = 0; i < WARMUPS + READS; i++) {
    for (const [key, id] of (i % 2 === 0
      ? [
          ["many", many],
          ["one", one],
        ]
      : [
          ["one", one],
          ["many", many],
        ]) as ["many" | "one", string][]) {
      const op = i % 2 === 0 ? "add" : "remove";
      const change = await timed(admin, "PATCH", `/Groups/${moved}`, {
        schemas: [PATCH_OP],
        Operations: [
          op === "add" ? { op, path: "members", value: [{ value: id }] } : { op, path: `members[value eq "${id}"]` },
        ],
      });
      const me = await timed(tokens[key], "GET", "/auth/isLogged");
      if (i >= WARMUPS) {
        userMs[key].change.push(change.elapsed);
        userMs[key].me.push(me.elapsed);
      }
    }
  }
  const groupsOf = async (id: string) =>
    Number(
      (
        await db
          .selectFrom("group_members")
          .select((eb) => eb.fn.countAll<number>().as("n"))
          .where("user_id", "=", id)
          .executeTakeFirstOrThrow()
      ).n,
    );

  process.stdout.write(
    `${JSON.stringify({
      store: app.services.store.dialect,
      members: MEMBERS,
      patchSize: PATCH_SIZE,
      patch: {
        buildMs: patchMs,
        addMs: { big: median(churn.big.add), empty: median(churn.empty.add) },
        removeMs: { big: median(churn.big.remove), empty: median(churn.empty.remove) },
        rounds: ROUNDS,
      },
      read: { smallMs: median(readMs.small), bigMs: median(readMs.big), count: READS },
      user: {
        groups: { many: await groupsOf(many), one: await groupsOf(one) },
        changeMs: { many: median(userMs.many.change), one: median(userMs.one.change) },
        meMs: { many: median(userMs.many.me), one: median(userMs.one.me) },
      },
    })}\n`,
  );
} finally {
  await app.close();
}
