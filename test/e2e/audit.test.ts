/**
 * The audit trail with processes of its own: `audit tail --follow` against a remote server sees
 * what another process writes, and resumes from its printed cursor. What each action records, the
 * secrets kept out and who reads what run in this process: test/commands/audit.test.ts.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { afterAll, describe, expect, it } from "vitest";
import { type AuditRecord, waitFor } from "../helpers/audit.js";
import { BIN, createEventArgv, ROOT, show, useSession } from "../helpers/cli.js";

describe("audit tail --follow against a remote server", () => {
  const s = useSession("remote");
  let child: ChildProcess | undefined;
  afterAll(async () => {
    if (child && child.exitCode === null) child.kill("SIGKILL");
  });

  const codes = (stdout: string) =>
    stdout
      .split("\n")
      .filter(Boolean)
      .map((line) => JSON.parse(line) as AuditRecord)
      .filter((record) => record.action === "event.create")
      .map((record) => record.target?.id);

  async function createEvent(code: string) {
    const created = await s.run(createEventArgv(code, "Tail"));
    expect(created.exitCode, show(created)).toBe(0);
  }

  it("picks up records another process writes, and resumes from the printed cursor without loss or repeat", async () => {
    child = spawn("node", [BIN, "audit", "tail", "--follow", "--lines", "0"], {
      cwd: ROOT,
      env: s.env,
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout!.setEncoding("utf8").on("data", (chunk: string) => {
      stdout += chunk;
    });
    child.stderr!.setEncoding("utf8").on("data", (chunk: string) => {
      stderr += chunk;
    });
    const exited = new Promise<number | null>((done) => child!.once("exit", (code) => done(code)));
    // the tail has read where it starts once it polls; give it that first round trip
    await new Promise((done) => setTimeout(done, 1500));
    for (const code of ["T-1", "T-2"]) {
      await createEvent(code);
      await waitFor(async () => (codes(stdout).includes(code) ? true : undefined), `${code} in the tail`);
    }
    child.kill("SIGINT");
    expect(await exited).toBe(0);
    expect(codes(stdout)).toEqual(["T-1", "T-2"]);
    const cursor = /--since (\S+)/.exec(stderr)?.[1];
    expect(cursor, stderr).toBeTruthy();

    for (const code of ["T-3", "T-4"]) await createEvent(code);
    const resumed = await s.run(["audit", "tail", "--since", cursor!]);
    expect(resumed.exitCode, show(resumed)).toBe(0);
    expect(codes(resumed.stdout)).toEqual(["T-3", "T-4"]);
    // and its own cursor continues after T-4: nothing again
    const again = /--since (\S+)/.exec(resumed.stderr)?.[1];
    const none = await s.run(["audit", "tail", "--since", again!]);
    expect(codes(none.stdout)).toEqual([]);
  }, 120_000);
});

// CSV is framed as every streamed list frames it: one header, then a row per record, in both modes
describe.each(["embedded", "remote"] as const)("audit tail -o csv --follow (%s)", (mode) => {
  const s = useSession(mode);

  it("writes the CSV header once, with a row under it for each record of each poll", async () => {
    const follow = spawn("node", [BIN, "audit", "tail", "-o", "csv", "--follow", "--lines", "1"], {
      cwd: ROOT,
      env: s.env,
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    follow.stdout!.setEncoding("utf8").on("data", (chunk: string) => {
      stdout += chunk;
    });
    const exited = new Promise<number | null>((done) => follow.once("exit", (code) => done(code)));
    try {
      await waitFor(async () => (stdout.includes("\n") ? true : undefined), "the first record");
      for (const code of ["C-1", "C-2"]) {
        const created = await s.run(createEventArgv(code, "Csv"));
        expect(created.exitCode, show(created)).toBe(0);
        await waitFor(
          async () => (stdout.split("event.create").length > (code === "C-1" ? 1 : 2) ? true : undefined),
          code,
        );
      }
      follow.kill("SIGINT");
      expect(await exited).toBe(0);
    } finally {
      if (follow.exitCode === null) follow.kill("SIGKILL");
    }
    const lines = stdout.trim().split("\n");
    expect(lines[0]).toBe(
      "id,time,action,outcome,actor.id,actor.userName,actor.consumerId,actor.apiTokenId,actor.apiTokenName,target.type,target.id,target.name,requestId,clientIp,userAgent",
    );
    expect(lines.filter((line) => line === lines[0])).toHaveLength(1);
    // the record shown first, then the two events' records, each a row of the header's 14 columns
    expect(lines.filter((line) => line.includes("event.create"))).toHaveLength(2);
    expect(lines.length).toBeGreaterThanOrEqual(4);
  }, 120_000);
});
