/**
 * The audit trail through the commands, in this process and in both modes: every action leaves
 * exactly one record with the right actor, target and outcome (refusals too); no password, token
 * or secret used reaches the table; each role reads what the roles table says. `audit tail
 * --follow` beside another process writing stays with the binary: test/e2e/audit.test.ts.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import Database from "better-sqlite3";
import { beforeAll, describe, expect, it } from "vitest";
import { type AuditRecord, waitFor } from "../helpers/audit.js";
import { type Env, json, MODES, PASSWORD, show } from "../helpers/cli.js";
import { runInProcess, useInProcessSession } from "../helpers/in-process.js";

const TEMPORARY = "temporary wombat saddle 7781";
const CHOSEN = "chosen heron lantern 5523 x";
const SECOND = "second quartz meadow 9914 y";
const WRONG = "not the password at all 0000";
const RESET = "reset-chosen violet harbor 31";

describe.each(MODES)("audit trail (%s)", (mode) => {
  const s = useInProcessSession(mode, {}, 120_000);
  let jdoeEnv: Env;
  let otherEnv: Env;
  const ids: Record<string, string> = {};
  const secrets: string[] = [PASSWORD, TEMPORARY, CHOSEN, SECOND, WRONG, RESET];

  /** Every record after `since` matching the filter, read by the admin. */
  async function recordsSince(since: string | undefined, filter: string): Promise<AuditRecord[]> {
    const args = ["audit", "list", "--all", "--json", "--filter", filter, ...(since ? ["--since", since] : [])];
    const listed = await s.run(args);
    expect(listed.exitCode, show(listed)).toBe(0);
    return json<AuditRecord[]>(listed);
  }

  async function newestId(): Promise<string | undefined> {
    const listed = await s.run(["audit", "list", "--page-size", "1", "--json"]);
    expect(listed.exitCode, show(listed)).toBe(0);
    return json<AuditRecord[]>(listed)[0]?.id;
  }

  beforeAll(async () => {
    jdoeEnv = await s.newConfig("jdoe");
    otherEnv = await s.newConfig("other");
  });

  interface Scenario {
    name: string;
    run: () => Promise<void>;
    /** the records the action must leave, exactly one each */
    expected: () => {
      action: string;
      outcome?: string;
      actor?: string | null;
      target?: { type: string; name?: string };
      /** the OAuth consumer acting for the actor (undefined: none) */
      consumer?: string;
    }[];
  }

  const ok = (result: { exitCode: number }, text = "") => expect(result.exitCode, text).toBe(0);

  const scenarios: Scenario[] = [
    {
      name: "users create (a temporary password)",
      run: async () => {
        const created = await s.run(
          ["users", "create", "--user-name", "jdoe", "--email", "jdoe@example.com", "--password-stdin", "--json"],
          { input: `${TEMPORARY}\n` },
        );
        ok(created, show(created));
        ids.jdoe = json<{ id: string }>(created).id;
      },
      expected: () => [{ action: "user.create", actor: "admin", target: { type: "User", name: "jdoe" } }],
    },
    {
      name: "a wrong password",
      run: async () => {
        const refused = await s.login(jdoeEnv, "jdoe", WRONG);
        expect(refused.exitCode, show(refused)).toBe(4);
      },
      expected: () => [
        { action: "login", outcome: "invalid_credentials", actor: null, target: { type: "User", name: "jdoe" } },
      ],
    },
    {
      name: "a first login that changes the temporary password",
      run: async () => ok(await s.login(jdoeEnv, "jdoe", TEMPORARY, CHOSEN)),
      expected: () => [
        { action: "login", actor: "jdoe", target: { type: "User", name: "jdoe" } },
        { action: "password.change", actor: "jdoe", target: { type: "User", name: "jdoe" } },
      ],
    },
    {
      name: "a password change with a wrong current password",
      run: async () => {
        const refused = await runInProcess(["auth", "change-password", "--password-stdin"], {
          env: jdoeEnv,
          input: `${WRONG}\n${SECOND}\n`,
        });
        expect(refused.exitCode, show(refused)).toBe(4);
      },
      expected: () => [{ action: "password.change", outcome: "invalid_credentials", actor: "jdoe" }],
    },
    {
      name: "users set-roles (admin makes jdoe support)",
      run: async () => ok(await s.run(["users", "set-roles", "jdoe", "support"])),
      expected: () => [{ action: "user.roles", actor: "admin", target: { type: "User", name: "jdoe" } }],
    },
    {
      name: "a refused role change (support demoting the admin)",
      run: async () => {
        const refused = await runInProcess(["users", "set-roles", "admin", "member"], { env: jdoeEnv });
        expect(refused.exitCode, show(refused)).toBe(5);
      },
      expected: () => [
        { action: "user.roles", outcome: "forbidden", actor: "jdoe", target: { type: "User", name: "admin" } },
      ],
    },
    {
      name: "users disable",
      run: async () => ok(await s.run(["users", "disable", "jdoe"])),
      expected: () => [{ action: "user.disable", actor: "admin", target: { type: "User", name: "jdoe" } }],
    },
    {
      name: "users enable",
      run: async () => ok(await s.run(["users", "enable", "jdoe"])),
      expected: () => [{ action: "user.enable", actor: "admin", target: { type: "User", name: "jdoe" } }],
    },
    {
      name: "users set-password (a temporary password, by the admin)",
      run: async () =>
        ok(await s.run(["users", "set-password", "jdoe", "--password-stdin"], { input: `${TEMPORARY}\n` })),
      expected: () => [{ action: "password.set", actor: "admin", target: { type: "User", name: "jdoe" } }],
    },
    {
      name: "five wrong passwords lock the account",
      run: async () => {
        for (let i = 0; i < 5; i++) expect((await s.login(otherEnv, "jdoe", WRONG)).exitCode).toBe(4);
      },
      expected: () => [{ action: "lockout", actor: null, target: { type: "User", name: "jdoe" } }],
    },
    {
      name: "users unlock",
      run: async () => ok(await s.run(["users", "unlock", "jdoe"])),
      expected: () => [{ action: "unlock", actor: "admin", target: { type: "User", name: "jdoe" } }],
    },
    {
      name: "renew-password, then reset-password with the mailed link",
      run: async () => {
        ok(await runInProcess(["auth", "renew-password", "--user", "jdoe"], { env: otherEnv }));
        const mail = await waitFor(async () => {
          const listed = await s.run(["server", "outbox", "list", "--to", "jdoe@example.com", "--json"]);
          return json<{ id: string }[]>(listed)[0];
        }, "the reset mail");
        const link = await s.run(["server", "outbox", "show", mail.id, "--link"]);
        const token = new URL(link.stdout.trim()).searchParams.get("token") as string;
        secrets.push(token, link.stdout.trim());
        const reset = await runInProcess(["auth", "reset-password", "--token", token, "--password-stdin"], {
          env: otherEnv,
          input: `${RESET}\n`,
        });
        ok(reset, show(reset));
      },
      expected: () => [
        { action: "password.reset_request", actor: null, target: { type: "User", name: "jdoe" } },
        { action: "password.reset", actor: "jdoe", target: { type: "User", name: "jdoe" } },
      ],
    },
    {
      name: "a reset link nobody sent",
      run: async () => {
        const refused = await runInProcess(
          ["auth", "reset-password", "--token", "made-up-token-1234567890", "--password-stdin"],
          {
            env: otherEnv,
            input: `${RESET}\n`,
          },
        );
        expect(refused.exitCode, show(refused)).not.toBe(0);
      },
      expected: () => [{ action: "password.reset", outcome: "invalid_reset_token", actor: null }],
    },
    {
      name: "login and logout",
      run: async () => {
        ok(await s.login(otherEnv, "admin", PASSWORD));
        ok(await runInProcess(["auth", "logout"], { env: otherEnv }));
      },
      expected: () => [
        { action: "login", actor: "admin", target: { type: "User", name: "admin" } },
        { action: "logout", actor: "admin", target: { type: "User", name: "admin" } },
      ],
    },
    {
      name: "oauth consumers create and delete",
      run: async () => {
        const created = await s.run(["oauth", "consumers", "create", "--name", "Printer", "--json"]);
        ok(created, show(created));
        const consumer = json<{ id: string; consumerSecret: string }>(created);
        secrets.push(consumer.consumerSecret);
        ok(await s.run(["oauth", "consumers", "delete", consumer.id, "--yes"]));
      },
      expected: () => [
        { action: "oauth.consumer.create", actor: "admin", target: { type: "OAuthConsumer", name: "Printer" } },
        { action: "oauth.consumer.delete", actor: "admin", target: { type: "OAuthConsumer", name: "Printer" } },
      ],
    },
    {
      name: "oauth flow approves a grant, the consumer acts for the user, tokens revoke ends it",
      run: async () => {
        const created = await s.run(["oauth", "consumers", "create", "--name", "Partner", "--json"]);
        ok(created, show(created));
        const consumer = json<{ id: string; consumerKey: string; consumerSecret: string }>(created);
        ids.partner = consumer.id;
        secrets.push(consumer.consumerSecret);
        const flow = await s.run(["oauth", "flow", "--consumer-key", consumer.consumerKey, "--consumer-secret-stdin"], {
          input: `${consumer.consumerSecret}\n`,
        });
        ok(flow, show(flow));
        const body = JSON.stringify({ code: "VIA-OAUTH", name: "Via OAuth", startsAt: "2027-01-10T09:00:00Z" });
        const call = await s.run(["oauth", "call", "POST", "/api/crm/v1/events", "--data", "-"], { input: body });
        ok(call, show(call));
        const listed = await s.run(["oauth", "tokens", "list", "--json"]);
        const grant = json<{ token: string; consumerId: string }[]>(listed).find((g) => g.consumerId === consumer.id);
        ok(await s.run(["oauth", "tokens", "revoke", grant!.token, "--yes"]));
      },
      expected: () => [
        { action: "oauth.consumer.create", actor: "admin", target: { type: "OAuthConsumer", name: "Partner" } },
        { action: "oauth.grant.approve", actor: "admin", target: { type: "OAuthConsumer" }, consumer: undefined },
        { action: "event.create", actor: "admin", target: { type: "Event", name: "Via OAuth" }, consumer: ids.partner },
        { action: "oauth.grant.revoke", actor: "admin", target: { type: "User", name: undefined } },
      ],
    },
    {
      name: "server rotate-key",
      run: async () => ok(await s.run(["server", "rotate-key"])),
      expected: () => [{ action: "key.rotate", actor: null, target: { type: "SigningKey" } }],
    },
    {
      name: "events create, update, delete",
      run: async () => {
        ok(
          await s.run([
            "events",
            "create",
            "--set",
            "code=AUDIT-1",
            "--set",
            "name=Audit",
            "--set",
            "startsAt=2027-01-10T09:00:00Z",
          ]),
        );
        ok(await s.run(["events", "update", "AUDIT-1", "--set", "name=Audited"]));
        ok(await s.run(["events", "delete", "AUDIT-1", "--yes"]));
      },
      expected: () => [
        { action: "event.create", actor: "admin", target: { type: "Event", name: "Audit" } },
        { action: "event.update", actor: "admin", target: { type: "Event", name: "Audited" } },
        { action: "event.delete", actor: "admin", target: { type: "Event", name: "Audited" } },
      ],
    },
    {
      // a bulk request leaves one record with its counts, not one per row
      name: "events import, in batches and atomic",
      run: async () => {
        const lines = (prefix: string) =>
          [1, 2, 3].map((n) =>
            JSON.stringify({ code: `${prefix}-${n}`, name: "Bulk", startsAt: "2027-03-01T09:00:00Z" }),
          );
        ok(await s.run(["events", "import", "-", "--format", "ndjson"], { input: `${lines("BULK").join("\n")}\n` }));
        ok(
          await s.run(["events", "import", "-", "--format", "ndjson", "--atomic"], {
            input: `${lines("ATOMIC").join("\n")}\n`,
          }),
        );
      },
      expected: () => [
        { action: "event.batch", actor: "admin", target: { type: "Event" } },
        { action: "event.import", actor: "admin", target: { type: "Event" } },
      ],
    },
    {
      name: "custom resources create, update, delete",
      run: async () => {
        const created = await s.run(["resources", "create", "--type", "Room", "--set", "name=Atrium", "--json"]);
        ok(created, show(created));
        const { id } = json<{ id: string }>(created);
        ok(await s.run(["resources", "update", id, "--set", "capacity=12"]));
        ok(await s.run(["resources", "delete", id, "--yes"]));
      },
      expected: () => [
        { action: "resource.create", actor: "admin", target: { type: "Room", name: "Atrium" } },
        { action: "resource.update", actor: "admin", target: { type: "Room", name: "Atrium" } },
        { action: "resource.delete", actor: "admin", target: { type: "Room", name: "Atrium" } },
      ],
    },
    {
      name: "users delete",
      run: async () => {
        const created = await s.run(["users", "create", "--user-name", "lucy", "--no-password", "--json"]);
        ok(created, show(created));
        ok(await s.run(["users", "delete", "lucy", "--yes"]));
      },
      expected: () => [
        { action: "user.create", actor: "admin", target: { type: "User", name: "lucy" } },
        { action: "user.delete", actor: "admin", target: { type: "User", name: "lucy" } },
      ],
    },
  ];

  for (const scenario of scenarios) {
    it(`${scenario.name}: exactly one record each, with its actor, target and outcome`, async () => {
      const before = await newestId();
      await scenario.run();
      for (const want of scenario.expected()) {
        const filter = `action eq ${JSON.stringify(want.action)} and outcome eq ${JSON.stringify(want.outcome ?? "success")}`;
        // a reset request is written after the answer (in the background): wait for it
        const found = await waitFor(async () => {
          const records = await recordsSince(before, filter);
          return records.length > 0 ? records : undefined;
        }, want.action);
        expect(found, `${want.action}: ${JSON.stringify(found)}`).toHaveLength(1);
        const record = found[0]!;
        if (want.actor === null) expect(record.actor?.userName).toBeUndefined();
        else if (want.actor) expect(record.actor?.userName).toBe(want.actor);
        if (want.target) {
          const { name, ...rest } = want.target;
          expect(record.target).toMatchObject(name === undefined ? rest : want.target);
        }
        if ("consumer" in want) expect(record.actor?.consumerId).toBe(want.consumer);
        if (want.action !== "key.rotate") {
          expect(record.clientIp).toBeTruthy();
          expect(record.requestId).toBeTruthy();
        }
      }
    }, 120_000);
  }

  it("no password, token, secret or reset link the tests used is anywhere in the audit table", async () => {
    const config = readFileSync(join(s.sandbox.configDir, "config.json"), "utf8");
    // every token and secret the CLI stored: Bearer tokens, OAuth token credentials
    const tokens = [...config.matchAll(/"(?:token|tokenSecret|secret)"\s*:\s*"([^"]{8,})"/gi)].map((m) => m[1]!);
    expect(tokens.length).toBeGreaterThan(0);
    const db = new Database(join(s.sandbox.dataDir, "bizctl.db"), { readonly: true, fileMustExist: true });
    try {
      const rows = db.prepare("select * from audit_log").all() as Record<string, unknown>[];
      expect(rows.length).toBeGreaterThan(20);
      const text = JSON.stringify(rows);
      for (const secret of [...secrets, ...tokens])
        expect(text.includes(secret), `a secret in the audit table`).toBe(false);
      // and no hash either: bcrypt hashes start with $2
      expect(text).not.toMatch(/\$2[aby]\$/);
    } finally {
      db.close();
    }
  });

  it("members read only their own records, support no key operations, anonymous callers nothing", async () => {
    const mia = await s.run(["users", "create", "--user-name", "mia", "--password-stdin", "--json"], {
      input: `${TEMPORARY}\n`,
    });
    ok(mia, show(mia));
    const miaId = json<{ id: string }>(mia).id;
    const miaEnv = await s.newConfig("mia");
    ok(await s.login(miaEnv, "mia", TEMPORARY, CHOSEN));
    const own = await runInProcess(["audit", "list", "--all", "--json"], { env: miaEnv });
    ok(own, show(own));
    const ownRecords = json<AuditRecord[]>(own);
    expect(ownRecords.length).toBeGreaterThanOrEqual(3);
    for (const record of ownRecords) expect([record.actor?.id, record.target?.id]).toContain(miaId);

    // jdoe is support (set above), with the password the reset set
    ok(await s.login(jdoeEnv, "jdoe", RESET));
    const support = await runInProcess(["audit", "list", "--all", "--json"], { env: jdoeEnv });
    ok(support, show(support));
    const supportRecords = json<AuditRecord[]>(support);
    expect(supportRecords.some((r) => r.target?.id === ids.jdoe)).toBe(true);
    expect(supportRecords.some((r) => r.action.startsWith("key."))).toBe(false);
    const asAdmin = await recordsSince(undefined, 'action sw "key."');
    expect(asAdmin.length).toBeGreaterThan(0);

    // users get, as a table, ends with the user's recent activity
    const shown = await s.run(["users", "get", "mia", "-o", "table"]);
    ok(shown, show(shown));
    expect(shown.stdout).toMatch(/Recent activity:\n.*action.*\n.*password\.change/s);

    const anonymousEnv = await s.newConfig("anonymous");
    const anonymous = await runInProcess(["audit", "list"], { env: anonymousEnv });
    expect(anonymous.exitCode, show(anonymous)).toBe(4);
    if (s.server) {
      const response = await fetch(`${s.server.url}/audit`);
      expect(response.status).toBe(401);
      for (const method of ["PUT", "DELETE", "POST"]) {
        // The trail has no write method at all: 405 names the ones it has (RFC 9110).
        const write = await fetch(`${s.server.url}/audit`, { method });
        expect(write.status, method).toBe(405);
        expect(write.headers.get("allow"), method).toBe("GET, HEAD, OPTIONS");
      }
    }
  }, 120_000);
  it("a member sees the client address and user agent of its own records only, not of whoever acted on it", async () => {
    const created = await s.run(["users", "create", "--user-name", "noor", "--password-stdin", "--json"], {
      input: `${TEMPORARY}\n`,
    });
    ok(created, show(created));
    const noorId = json<{ id: string }>(created).id;
    const noorEnv = await s.newConfig("noor");
    ok(await s.login(noorEnv, "noor", TEMPORARY, CHOSEN));
    ok(await s.run(["users", "disable", "noor"]));
    ok(await s.run(["users", "enable", "noor"]));
    expect((await s.login(otherEnv, "noor", WRONG)).exitCode).toBe(4);
    ok(await s.login(noorEnv, "noor", CHOSEN));

    const listAs = async (env: Env, filter?: string) => {
      const listed = await runInProcess(["audit", "list", "--all", "--json", ...(filter ? ["--filter", filter] : [])], {
        env,
      });
      ok(listed, show(listed));
      return json<(AuditRecord & { userAgent?: string })[]>(listed).filter(
        (r) => r.actor?.id === noorId || r.target?.id === noorId,
      );
    };
    const seen = await listAs(noorEnv);
    const own = seen.filter((r) => r.actor?.id === noorId);
    const others = seen.filter((r) => r.actor?.id !== noorId);
    expect(own.length).toBeGreaterThan(0);
    // the admin's disable and enable, and the anonymous wrong password
    expect(others.map((r) => r.action).sort()).toEqual(["login", "user.create", "user.disable", "user.enable"]);
    for (const record of own)
      expect(record, JSON.stringify(record)).toMatchObject({
        clientIp: expect.any(String),
        userAgent: expect.stringMatching(/^bizctl\//),
      });
    for (const record of others) {
      expect(record.clientIp, JSON.stringify(record)).toBeUndefined();
      expect(record.userAgent, JSON.stringify(record)).toBeUndefined();
    }
    // nor can a filter test them
    expect((await listAs(noorEnv, "clientIp pr")).map((r) => r.actor?.id)).toEqual(own.map(() => noorId));
    // the admin still sees every origin
    const asAdmin = await listAs(s.env);
    expect(asAdmin).toHaveLength(seen.length);
    for (const record of asAdmin) expect(record.clientIp, JSON.stringify(record)).toEqual(expect.any(String));
  }, 120_000);
});
