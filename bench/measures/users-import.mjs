// 10. `users import` of BENCH_IMPORT_USERS (10 000) users, without and with --invite, against a
// server of its own whose mail goes to a real SMTP sink (smtp-server) on a loopback port. The
// rate with --invite is the informational number; the ratio to the plain import shows
// what the invitations (a token and a queued mail per user, in the bulk request) cost. The mail
// delivery rate (queue to SMTP) is reported beside it.
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { BIN, knob, LISTENING, PASSWORD } from "../lib/config.mjs";
import { run, startBackground } from "../lib/processes.mjs";
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

export async function measureUsersImport({ base }, dir) {
  const sink = await smtpSink();
  try {
    const dataDir = join(dir, "users-import");
    const env = { ...base, BIZCTL_CONFIG_DIR: join(dir, "users-import-config"), BIZCTL_DATA_DIR: dataDir };
    await mkdir(dataDir, { recursive: true });
    await run([BIN, "server", "init", "--data-dir", dataDir, "--password-stdin"], { env, input: `${PASSWORD}\n` });
    const server = await startBackground(
      "bizctl server (users import)",
      [BIN, "server", "start", "--port", "0", "--data-dir", dataDir, "--smtp-url", sink.url],
      { env, pattern: LISTENING, logFile: join(dir, "users-import.log") },
    );
    await run([BIN, "profile", "add", "u", "--server", server.url, "--use"], { env });
    await run([BIN, "auth", "login", "--user", "admin", "--password-stdin"], { env, input: `${PASSWORD}\n` });
    const plainFile = join(dir, "users-plain.csv");
    const inviteFile = join(dir, "users-invite.csv");
    await writeFile(plainFile, csv("plain"));
    await writeFile(inviteFile, csv("invited"));

    progress(`users import: ${thousands(USERS)} users without --invite`);
    const plain = await run([BIN, "users", "import", plainFile, "--json"], { env });
    progress(`users import: ${thousands(USERS)} users with --invite (SMTP sink)`);
    const mailStart = Date.now();
    // the pace is lifted: this measures the import, not the rate limit chosen for production
    const invited = await run([BIN, "users", "import", inviteFile, "--invite", "--invite-rate", "100000", "--json"], {
      env,
    });
    if (!/Imported (\d+) of \1 user\(s\), \1 invited/.test(invited.stderr)) {
      throw new Error(`users import --invite did not import and invite every user: ${invited.stderr.slice(0, 500)}`);
    }
    // the server's mail senders deliver the queue; wait for all of it (bounded)
    const deadline = Date.now() + Math.max(120_000, USERS * 50);
    while (sink.received() < USERS && Date.now() < deadline) await new Promise((r) => setTimeout(r, 200));
    const mailSeconds = (Date.now() - mailStart) / 1000;
    const plainRate = USERS / (plain.ms / 1000);
    const inviteRate = USERS / (invited.ms / 1000);
    const mailRate = sink.received() / mailSeconds;
    console.log(
      `\n10. users import of ${thousands(USERS)} users (CSV, POST /Bulk in batches of 500), remote, SMTP sink`,
    );
    console.log(
      table(
        ["run", "time", "users/s"],
        [
          ["users import", `${(plain.ms / 1000).toFixed(1)} s`, plainRate.toFixed(0)],
          ["users import --invite", `${(invited.ms / 1000).toFixed(1)} s`, inviteRate.toFixed(0)],
          [
            `invitation mails received by SMTP (${thousands(sink.received())} of ${thousands(USERS)})`,
            `${mailSeconds.toFixed(1)} s`,
            mailRate.toFixed(0),
          ],
        ],
        [1, 2],
      ),
    );
    const value = inviteRate / plainRate;
    console.log(
      `  --invite rate / plain rate: ${ratio(value)}  ${info("users import --invite / users import", value)}`,
    );
  } finally {
    await sink.close();
  }
}
