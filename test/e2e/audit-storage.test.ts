/**
 * The audit trail on both databases through a real server: records written and paged by the
 * Link cursor without repeats, and retention pruning what is older than --audit-retention-days.
 */
import Database from "better-sqlite3";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { AuditRecord } from "../helpers/audit.js";
import { BACKENDS, type Installation, type Installed, installAndStart } from "../helpers/backends.js";
import { bizctl, type Env, json, login, PASSWORD, type Sandbox, show } from "../helpers/cli.js";

/** A record from 2001: far past any retention. */
const OLD = {
  id: `${Date.UTC(2001, 0, 1).toString(36).padStart(9, "0")}0000oldrecrd`,
  time: "2001-01-01T00:00:00.000Z",
};
const OLD_COLUMNS = "id, time, action, outcome";
const OLD_VALUES = [OLD.id, OLD.time, "login", "success"];

/** Writes the record of 2001 straight into the installation's database. */
async function insertOld(sandbox: Sandbox, installation: Installation): Promise<void> {
  if (installation.databaseUrl) {
    const client = new pg.Client(installation.databaseUrl);
    await client.connect();
    try {
      await client.query(`insert into audit_log (${OLD_COLUMNS}) values ($1, $2, $3, $4)`, OLD_VALUES);
    } finally {
      await client.end();
    }
    return;
  }
  const db = new Database(`${sandbox.dataDir}/bizctl.db`);
  try {
    db.prepare(`insert into audit_log (${OLD_COLUMNS}) values (?, ?, ?, ?)`).run(...OLD_VALUES);
  } finally {
    db.close();
  }
}

describe.each(BACKENDS)("audit trail on $name", (backend) => {
  let installed: Installed | undefined;
  let env: Env;

  beforeAll(async () => {
    installed = await installAndStart(backend, {
      serverArgs: ["--audit-retention-days", "30"],
      beforeStart: insertOld,
    });
    env = installed.installation.env;
    const added = await bizctl(["profile", "add", "r", "--server", installed.server.url, "--use"], { env });
    expect(added.exitCode, show(added)).toBe(0);
  }, 120_000);
  afterAll(async () => installed?.close());

  it("records refusals and successes, pages them by cursor without repeats, and prunes past retention", async () => {
    expect((await login(env, "admin", "wrong password for the trail 1")).exitCode).toBe(4);
    expect((await login(env, "admin", PASSWORD)).exitCode).toBe(0);
    for (const code of ["S-1", "S-2", "S-3"]) {
      const created = await bizctl(
        ["events", "create", "--set", `code=${code}`, "--set", "name=S", "--set", "startsAt=2027-01-10T09:00:00Z"],
        { env },
      );
      expect(created.exitCode, show(created)).toBe(0);
    }
    const whole = await bizctl(["audit", "list", "--all", "--json"], { env });
    expect(whole.exitCode, show(whole)).toBe(0);
    const all = json<AuditRecord[]>(whole);
    // the 2001 record went at start (retention 30 days); what is left is this run's
    expect(all.map((r) => r.id)).not.toContain(OLD.id);
    expect(all.filter((r) => r.action === "login" && r.outcome === "invalid_credentials")).toHaveLength(1);
    expect(all.filter((r) => r.action === "event.create")).toHaveLength(3);

    const paged = await bizctl(["audit", "list", "--all", "--page-size", "1", "--json"], { env });
    expect(paged.exitCode, show(paged)).toBe(0);
    const ids = json<AuditRecord[]>(paged).map((r) => r.id);
    expect(ids).toEqual(all.map((r) => r.id));
    expect([...ids].sort().reverse()).toEqual(ids);
    expect(new Set(ids).size).toBe(ids.length);

    const filtered = await bizctl(
      ["audit", "list", "--json", "--filter", 'action eq "login" and outcome ne "success"'],
      { env },
    );
    expect(json<AuditRecord[]>(filtered).map((r) => r.outcome)).toEqual(["invalid_credentials"]);
    const bad = await bizctl(["audit", "list", "--filter", 'nosuch eq "x"'], { env });
    expect(bad.exitCode, show(bad)).toBe(7);
  }, 120_000);
});
