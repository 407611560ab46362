// 10. `users import` of BENCH_IMPORT_USERS (10 000) users through the binary, against servers of
// their own whose mail goes to a real SMTP sink (smtp-server) on a loopback port: one on SQLite,
// one on a PostgreSQL database made for the run. The same file is imported plainly into each, then
// another one with --invite on SQLite. Informational: the rate with --invite against the plain one
// on SQLite (what the invitations, a token and a queued mail per user in the bulk request, cost),
// and PostgreSQL's plain rate against SQLite's. The mail delivery rate (queue to SMTP) is
// reported beside them.
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { BIN, knob } from "../lib/config.mjs";
import { freshServer } from "../lib/fresh-server.mjs";
import { createDatabase } from "../lib/postgres.mjs";
import { run, stop } from "../lib/processes.mjs";
import { info, progress, ratio, table, thousands } from "../lib/report.mjs";
import { smtpSink } from "../lib/smtp-sink.mjs";

const USERS = knob("BENCH_IMPORT_USERS", 10_000);

function csv(prefix) {
  const lines = ["userName,name.givenName,name.familyName,emails[0].value,department,roles"];
  for (let i = 1; i <= USERS; i++) {
    lines.push(`${prefix}${i},Given${i},"Family, ${i}",${prefix}${i}@example.com,Dept ${i % 17},member`);
  }
  return `${lines.join("\n")}\n`;
}

/** `users import FILE ...flags` with the profile of `env`, which must import (and invite) every user. */
async function importUsers(env, file, flags = []) {
  const done = await run([BIN, "users", "import", file, ...flags, "--json"], { env });
  let summary;
  try {
    summary = JSON.parse(done.stdout);
  } catch {
    summary = {};
  }
  const invited = flags.includes("--invite") ? summary.invited === USERS : true;
  if (summary.created !== USERS || summary.failed !== 0 || !invited) {
    throw new Error(
      `users import ${flags.join(" ")} did not import every user: ${done.stdout.slice(0, 300)} ${done.stderr.slice(0, 300)}`,
    );
  }
  return { ms: done.ms, rate: USERS / (done.ms / 1000) };
}

export async function measureUsersImport({ base }, dir) {
  const sink = await smtpSink();
  const servers = [];
  try {
    // the same settings on both stores; only the --invite import sends mail
    const args = ["--smtp-url", sink.url];
    const sqlite = await freshServer(base, dir, "users-import", { args });
    servers.push(sqlite.server);
    const postgres = await freshServer(base, dir, "users-import-postgres", {
      databaseUrl: await createDatabase("users_import"),
      args,
    });
    servers.push(postgres.server);
    const plainFile = join(dir, "users-plain.csv");
    const inviteFile = join(dir, "users-invite.csv");
    await writeFile(plainFile, csv("plain"));
    await writeFile(inviteFile, csv("invited"));

    progress(`users import: ${thousands(USERS)} users without --invite, SQLite`);
    const plain = await importUsers(sqlite.env, plainFile);
    progress(`users import: the same ${thousands(USERS)} users without --invite, PostgreSQL`);
    const plainPostgres = await importUsers(postgres.env, plainFile);
    progress(`users import: ${thousands(USERS)} users with --invite (SMTP sink), SQLite`);
    const mailStart = Date.now();
    // the pace is lifted: this measures the import, not the rate limit chosen for production
    const invited = await importUsers(sqlite.env, inviteFile, ["--invite", "--invite-rate", "100000"]);
    // the server's mail senders deliver the queue; wait for all of it (bounded)
    const deadline = Date.now() + Math.max(120_000, USERS * 50);
    while (sink.received() < USERS && Date.now() < deadline) await new Promise((r) => setTimeout(r, 200));
    const mailSeconds = (Date.now() - mailStart) / 1000;
    const mailRate = sink.received() / mailSeconds;
    console.log(
      `\n10. users import of ${thousands(USERS)} users (CSV, POST /Bulk in batches of 500), remote, SMTP sink, on SQLite and PostgreSQL`,
    );
    const row = (label, store, r) => [label, store, `${(r.ms / 1000).toFixed(1)} s`, r.rate.toFixed(0)];
    console.log(
      table(
        ["run", "store", "time", "users/s"],
        [
          row("users import", "SQLite", plain),
          row("users import", "PostgreSQL", plainPostgres),
          row("users import --invite", "SQLite", invited),
          [
            `invitation mails received by SMTP (${thousands(sink.received())} of ${thousands(USERS)})`,
            "SQLite",
            `${mailSeconds.toFixed(1)} s`,
            mailRate.toFixed(0),
          ],
        ],
        [2, 3],
      ),
    );
    const inviteCost = invited.rate / plain.rate;
    console.log(
      `  --invite rate / plain rate: ${ratio(inviteCost)}  ${info("users import --invite / users import", inviteCost)}`,
    );
    const postgresCost = plainPostgres.rate / plain.rate;
    console.log(
      `  PostgreSQL rate / SQLite rate, plain: ${ratio(postgresCost)}  ${info("users import: PostgreSQL / SQLite", postgresCost)}`,
    );
  } finally {
    for (const server of servers) await stop(server.child);
    await sink.close();
  }
}
