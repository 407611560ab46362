#!/usr/bin/env node
// `npm run bench` (= `npm run build && node bench/run.mjs`): start-up and throughput of bizctl,
// each reported as a ratio to a reference measured in the same run, next to its target.
//
// This file only orchestrates: one shared fixture (lib/setup.mjs), then each measure in turn, one
// file per measure under measures/, and the summary table with PASS/MISS.
//   1. measures/startup.mjs         CLI start-up against `node -e 0`
//   2. measures/throughput.mjs      the server's hot path (event read, /auth/isLogged, /health) against bare Fastify
//   3. measures/imports.mjs         start-up breakdown: packages and the CLI bundle's chunks
//   4. measures/user-reads.mjs      User list reads at 1 000 and 100 000 users, SQLite and PostgreSQL (in-process)
//   5. measures/renew-password.mjs  enumeration timing: renewPassword existing against unknown user, login
//                                   unknown user against wrong password, each with the request after it
//   6. measures/oauth.mjs           OAuth-signed against Bearer throughput on the event read
//   7. measures/workers.mjs         `server start --workers 2` against `--workers 1` on the event read
//   8. measures/million-events.mjs  reads and export at 1 000 and 1 000 000 events (seeded straight into the
//                                   store), on SQLite then PostgreSQL
//   9. measures/json-server.mjs     GET by id and POST create against json-server 0.17 (installed into the temp dir)
//  10. measures/users-import.mjs    `users import` of 10 000 users with --invite against a plain import (SMTP sink),
//                                   and the plain import on PostgreSQL against SQLite
//  11. measures/events-import.mjs   `events import` of 1 000 000 NDJSON events, embedded and remote, against a bare better-sqlite3 loop
//  12. measures/audit.mjs           audited writes (User update, login) against audit() switched off (bench/audit.mts, in-process)
//  13. measures/import-commit.mjs   a member's logins and creates during an admin's atomic import of 100 000 events, against
//                                   the same on the idle server, on SQLite and on PostgreSQL
//  14. measures/login-second-factor.mjs  login with a TOTP code against without one; a wrong code against a wrong password
//  15. measures/metrics.mjs         the authenticated read with --metrics-port (cost <= 5%), and traced, against neither
//  16. measures/login-previous.mjs  a login against the previous release's (BENCH_PREVIOUS, built from git), SQLite and PostgreSQL
//  17. measures/users-sync.mjs      `users sync` at 100 000 users: --plan and --apply (and the apply of a first sync adopting
//                                   every user) against `users import` of the same file
//  18. measures/groups-scale.mjs    PATCHes of 1 000 member adds and removes into a group of 9 000 against an empty one,
//                                   a read without members at 10 000 against 10; a User in 100 groups against one in 1
//  19. measures/previous-release.mjs  this build against the previous release (BENCH_PREVIOUS_AB, built from git) in
//                                   one run: CLI start-up, the hot path on one core, a login's p50, the argon2id floor
//  20. measures/users-search.mjs    `users search` (GET /Resources?resourcetypes=User&search=…) at 1 000 and 100 000 users,
//                                   SQLite and PostgreSQL (in-process, the script of section 4)
// Sections 2 to 7 also print informational rows (no targets) to show where the time goes.
//
// It is a script, not a test: it prints PASS/MISS per target and exits 0 whatever the numbers;
// it exits 1 only when something could not be measured. Everything runs in a fresh temporary
// directory (BIZCTL_CONFIG_DIR / BIZCTL_DATA_DIR), and the background servers are always stopped.
//
// Knobs, for quick checks (the defaults are the reference settings):
//   BENCH_RUNS (15) start-up runs per command, BENCH_IMPORT_RUNS (7) runs per import,
//   BENCH_SECONDS (5) per throughput measurement, BENCH_ROUNDS (2) throughput rounds per server
//   (sections 2, 6 and 7), BENCH_FILTER_USERS (100000) users at the large size, BENCH_FILTER_SMALL (1000) at the
//   small one, BENCH_FILTER_EQ (200) / BENCH_FILTER_CO (30) requests per filter and size,
//   BENCH_RENEW_REQUESTS (200) renewPassword requests per kind, BENCH_LOGIN_REQUESTS (60) login requests per kind;
//   BENCH_EVENTS (1000000) events at the large size, BENCH_EVENTS_SMALL (1000) at the small one,
//   BENCH_USERS (100000) users at the large size, BENCH_EVENT_REQUESTS (200) requests per read and size,
//   BENCH_MILLION_STORES (sqlite,postgres) the stores it runs on, BENCH_MILLION_PG_IMPORT (0; 1: the large
//   PostgreSQL database gets its events by `events import`);
//   BENCH_JSON_RECORDS (10000) records in json-server's db.json;
//   BENCH_IMPORT_USERS (10000) users per `users import`;
//   BENCH_IMPORT_EVENTS (1000000) events imported at the large size, BENCH_IMPORT_EVENTS_SMALL (1000) at the small one;
//   BENCH_AUDIT_UPDATES (300) / BENCH_AUDIT_LOGINS (40) audited and unaudited writes of each kind;
//   BENCH_COMMIT_EVENTS (100000) events in the committed import, BENCH_COMMIT_IDLE_ROUNDS (30) idle rounds;
//   BENCH_SYNC_USERS (100000) users in the `users sync` measure;
//   BENCH_GROUP_MEMBERS (10000) / BENCH_GROUPS_OF_USER (100) / BENCH_GROUP_READS (200) in the groups measure;
//   BENCH_PREVIOUS (a1d4ff5) the release section 16 builds, BENCH_PREVIOUS_AB (4011471) the one section 19 builds;
//   BENCH_ONLY (e.g. "throughput,workers") runs only the named measures after the set-up.
import { harness } from "./lib/harness.mjs";
import { dropDatabases } from "./lib/postgres.mjs";
import { summary } from "./lib/report.mjs";
import { setUp } from "./lib/setup.mjs";
import { measureAudit } from "./measures/audit.mjs";
import { measureEventsImport } from "./measures/events-import.mjs";
import { measureGroupsScale } from "./measures/groups-scale.mjs";
import { measureImportCommit } from "./measures/import-commit.mjs";
import { measureImports } from "./measures/imports.mjs";
import { measureJsonServer } from "./measures/json-server.mjs";
import { measureLoginPrevious } from "./measures/login-previous.mjs";
import { measureLoginSecondFactor } from "./measures/login-second-factor.mjs";
import { measureMetrics } from "./measures/metrics.mjs";
import { measureMillionEvents } from "./measures/million-events.mjs";
import { measureOAuth } from "./measures/oauth.mjs";
import { measurePreviousRelease } from "./measures/previous-release.mjs";
import { measureRenewPassword } from "./measures/renew-password.mjs";
import { measureStartup } from "./measures/startup.mjs";
import { measureThroughput } from "./measures/throughput.mjs";
import { measureUserReads } from "./measures/user-reads.mjs";
import { measureUsersImport } from "./measures/users-import.mjs";
import { measureUsersSearch } from "./measures/users-search.mjs";
import { measureUsersSync } from "./measures/users-sync.mjs";
import { measureWorkers } from "./measures/workers.mjs";

const only = process.env.BENCH_ONLY ? new Set(process.env.BENCH_ONLY.split(",").map((s) => s.trim())) : undefined;
const wanted = (name) => !only || only.has(name);

await harness(
  "bench",
  async (workDir) => {
    const setup = await setUp(workDir);
    // section 3 reports the CLI's cost over `node -e 0` from section 1: it needs it
    const startup = wanted("startup") || wanted("imports") ? await measureStartup(setup) : undefined;
    if (wanted("throughput")) await measureThroughput(setup, workDir);
    if (wanted("imports")) await measureImports(setup, startup);
    if (wanted("user-reads")) await measureUserReads(setup, workDir);
    if (wanted("renew-password")) await measureRenewPassword(setup, workDir);
    if (wanted("oauth")) await measureOAuth(setup);
    if (wanted("workers")) await measureWorkers(setup, workDir);
    if (wanted("million-events")) await measureMillionEvents(setup, workDir);
    if (wanted("json-server")) await measureJsonServer(setup, workDir);
    if (wanted("users-import")) await measureUsersImport(setup, workDir);
    if (wanted("events-import")) await measureEventsImport(setup, workDir);
    if (wanted("audit")) await measureAudit(setup, workDir);
    if (wanted("import-commit")) await measureImportCommit(setup, workDir);
    if (wanted("login-second-factor")) await measureLoginSecondFactor(setup, workDir);
    if (wanted("metrics")) await measureMetrics(setup, workDir);
    if (wanted("login-previous")) await measureLoginPrevious(setup, workDir);
    if (wanted("users-sync")) await measureUsersSync(setup, workDir);
    if (wanted("groups-scale")) await measureGroupsScale(setup, workDir);
    if (wanted("previous-release")) await measurePreviousRelease(setup, workDir);
    if (wanted("users-search")) await measureUsersSearch(setup, workDir);
    summary();
  },
  dropDatabases,
);
