import { writeFileSync } from "node:fs";
import { createServer, type IncomingMessage, type Server } from "node:http";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { parse as parseYaml } from "yaml";
import { createEventArgv, errorOf, json, MODES, show } from "../helpers/cli.js";
import { useInProcessSession } from "../helpers/in-process.js";

const STARTS = "startsAt=2027-01-10T09:00:00Z";

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((done, fail) => {
    let body = "";
    req.setEncoding("utf8");
    req.on("data", (chunk: string) => {
      body += chunk;
    });
    req.on("end", () => done(body));
    req.on("error", fail);
  });
}

describe.each(MODES)("events (%s)", (mode) => {
  const s = useInProcessSession(mode);

  async function codes(): Promise<string[]> {
    const list = await s.run(["events", "list", "--page-size", "100", "--json"]);
    expect(list.exitCode, show(list)).toBe(0);
    return json<{ code: string }[]>(list).map((e) => e.code);
  }

  async function get(code: string) {
    const result = await s.run(["events", "get", code, "--json"]);
    expect(result.exitCode, show(result)).toBe(0);
    return json(result);
  }

  it("creates with --set: JSON values, plain strings and dotted keys", async () => {
    const result = await s.run([
      "events",
      "create",
      "--set",
      "code=SET-1",
      "--set",
      "name=Kick-off meeting",
      "--set",
      STARTS,
      "--set",
      "allDay=false",
      "--set",
      'tags=["a","b"]',
      "--set",
      'attendees=[{"name":"Bo","email":"bo@example.com"}]',
      "--set",
      "customFields.x=1",
      "--set",
      "customFields.owner.team=sales",
    ]);
    expect(result.exitCode, show(result)).toBe(0);
    expect(result.stderr).toContain("Created event SET-1");
    const event = json(result);
    expect(event).toMatchObject({
      code: "SET-1",
      name: "Kick-off meeting",
      startsAt: "2027-01-10T09:00:00Z",
      allDay: false,
      tags: ["a", "b"],
      attendees: [{ name: "Bo", email: "bo@example.com" }],
      customFields: { x: 1, owner: { team: "sales" } },
      createdBy: s.userName,
      version: 1,
    });
    expect(await get("SET-1")).toEqual(event);
  });

  it("generates a code when none is given", async () => {
    const result = await s.run(["events", "create", "--set", "name=No code", "--set", STARTS]);
    expect(result.exitCode, show(result)).toBe(0);
    const { code } = json(result);
    expect(code).toMatch(/^[A-Za-z0-9._-]{1,64}$/);
    expect(await codes()).toContain(code);
  });

  it("creates from --file JSON, YAML, and '-' (stdin), with --set on top", async () => {
    const jsonFile = join(s.sandbox.root, "event.json");
    writeFileSync(jsonFile, JSON.stringify({ code: "FILE-JSON", name: "From JSON", startsAt: "2027-03-01T10:00:00Z" }));
    const yamlFile = join(s.sandbox.root, "event.yaml");
    writeFileSync(
      yamlFile,
      "code: FILE-YAML\nname: From YAML\nstartsAt: '2027-03-02T10:00:00+01:00'\ntags:\n  - yaml\ncustomFields:\n  budget: 1200\n",
    );

    const fromJson = await s.run(["events", "create", "--file", jsonFile]);
    expect(fromJson.exitCode, show(fromJson)).toBe(0);
    expect(json(fromJson)).toMatchObject({ code: "FILE-JSON", name: "From JSON", startsAt: "2027-03-01T10:00:00Z" });

    const fromYaml = await s.run(["events", "create", "--file", yamlFile, "--set", "location=Room 4"]);
    expect(fromYaml.exitCode, show(fromYaml)).toBe(0);
    expect(json(fromYaml)).toMatchObject({
      code: "FILE-YAML",
      name: "From YAML",
      startsAt: "2027-03-02T09:00:00Z",
      tags: ["yaml"],
      customFields: { budget: 1200 },
      location: "Room 4",
    });

    const fromStdinJson = await s.run(["events", "create", "--file", "-"], {
      input: JSON.stringify({ code: "STDIN-JSON", name: "From stdin", startsAt: "2027-03-03T10:00:00Z" }),
    });
    expect(fromStdinJson.exitCode, show(fromStdinJson)).toBe(0);
    expect(json(fromStdinJson)).toMatchObject({ code: "STDIN-JSON", name: "From stdin" });

    const fromStdinYaml = await s.run(["events", "create", "--file", "-"], {
      input: "code: STDIN-YAML\nname: YAML from stdin\nstartsAt: 2027-03-04T10:00:00Z\n",
    });
    expect(fromStdinYaml.exitCode, show(fromStdinYaml)).toBe(0);
    expect(json(fromStdinYaml)).toMatchObject({ code: "STDIN-YAML", startsAt: "2027-03-04T10:00:00Z" });
  });

  it("refuses bad record input with exit 2 and changes nothing", async () => {
    const before = await codes();
    const empty = await s.run(["events", "create", "--file", "-"], { input: "" });
    expect(empty.exitCode, show(empty)).toBe(2);
    expect(errorOf(empty).message).toMatch(/stdin is empty/);
    const blank = await s.run(["events", "create", "--file", "-"], { input: "  \n\n" });
    expect(blank.exitCode, show(blank)).toBe(2);
    const missingFile = await s.run(["events", "create", "--file", join(s.sandbox.root, "nope.json")]);
    expect(missingFile.exitCode, show(missingFile)).toBe(2);
    const garbage = await s.run(["events", "create", "--file", "-"], { input: "{ not: [json" });
    expect(garbage.exitCode, show(garbage)).toBe(2);
    const list = await s.run(["events", "create", "--file", "-"], { input: "[1, 2]" });
    expect(list.exitCode, show(list)).toBe(2);
    const badSet = await s.run(["events", "create", "--set", "nameWithoutValue"]);
    expect(badSet.exitCode, show(badSet)).toBe(2);
    const protoSet = await s.run(["events", "create", "--set", "__proto__.x=1", "--set", "name=x", "--set", STARTS]);
    expect(protoSet.exitCode, show(protoSet)).toBe(2);
    expect(await codes()).toEqual(before);
  });

  it("without a terminal, a missing required field exits 2 naming it", async () => {
    const noStart = await s.run(["events", "create", "--set", "code=NO-START", "--set", "name=x"]);
    expect(noStart.exitCode, show(noStart)).toBe(2);
    expect(noStart.stdout).toBe("");
    const error = errorOf(noStart);
    expect(error.code).toBe("usage");
    expect(error.message).toContain("startsAt");
    expect(error.hint).toContain("--set startsAt=");

    const noName = await s.run(["events", "create", "--set", STARTS, "--no-input"]);
    expect(noName.exitCode, show(noName)).toBe(2);
    expect(errorOf(noName).message).toContain("name");
    expect(await codes()).not.toContain("NO-START");
  });

  it("refuses invalid values with exit 7 naming the field", async () => {
    const badStart = await s.run([
      "events",
      "create",
      "--set",
      "code=BAD-START",
      "--set",
      "name=x",
      "--set",
      "startsAt=tomorrow",
    ]);
    expect(badStart.exitCode, show(badStart)).toBe(7);
    const error = errorOf(badStart);
    expect(error).toMatchObject({ code: "validation_failed", status: 400, exitCode: 7 });
    expect(error.errors?.map((e) => e.path)).toContain("/startsAt");

    const endsBefore = await s.run([
      "events",
      "create",
      "--set",
      "code=BAD-END",
      "--set",
      "name=x",
      "--set",
      STARTS,
      "--set",
      "endsAt=2027-01-10T08:00:00Z",
    ]);
    expect(endsBefore.exitCode, show(endsBefore)).toBe(7);
    const badCode = await s.run(["events", "create", "--set", "code=has space", "--set", "name=x", "--set", STARTS]);
    expect(badCode.exitCode, show(badCode)).toBe(7);
    const unknownField = await s.run(["events", "create", "--set", "name=x", "--set", STARTS, "--set", "colour=red"]);
    expect(unknownField.exitCode, show(unknownField)).toBe(7);
    const wrongType = await s.run(["events", "create", "--set", "name=x", "--set", STARTS, "--set", "tags=5"]);
    expect(wrongType.exitCode, show(wrongType)).toBe(7);
    const all = await codes();
    expect(all).not.toContain("BAD-START");
    expect(all).not.toContain("BAD-END");
  });

  it("refuses a duplicate code (in any case) with exit 6", async () => {
    const first = await s.run(["events", "create", "--set", "code=DUP", "--set", "name=First", "--set", STARTS]);
    expect(first.exitCode, show(first)).toBe(0);
    const second = await s.run(["events", "create", "--set", "code=DUP", "--set", "name=Second", "--set", STARTS]);
    expect(second.exitCode, show(second)).toBe(6);
    expect(errorOf(second)).toMatchObject({ code: "conflict", status: 409, exitCode: 6 });
    const lower = await s.run(["events", "create", "--set", "code=dup", "--set", "name=Third", "--set", STARTS]);
    expect(lower.exitCode, show(lower)).toBe(6);
    expect((await get("DUP")).name).toBe("First");
  });

  it("gets one event, and --fields shapes it; an unknown code exits 3", async () => {
    const event = await get("SET-1");
    expect(event.code).toBe("SET-1");
    const shaped = await s.run(["events", "get", "SET-1", "--fields", "code,name"]);
    expect(shaped.exitCode, show(shaped)).toBe(0);
    expect(json(shaped)).toEqual({ code: "SET-1", name: "Kick-off meeting" });
    // codes are case-insensitive
    expect((await get("set-1")).code).toBe("SET-1");
    const missing = await s.run(["events", "get", "NO-SUCH-EVENT"]);
    expect(missing.exitCode, show(missing)).toBe(3);
    expect(missing.stdout).toBe("");
    expect(errorOf(missing)).toMatchObject({ code: "not_found", status: 404, exitCode: 3 });
  });

  it("lists as a JSON array when piped, and --all fetches every page", async () => {
    for (let i = 1; i <= 5; i++) {
      const created = await s.run([
        "events",
        "create",
        "--set",
        `code=PAGE-${i}`,
        "--set",
        `name=Page ${i}`,
        "--set",
        `startsAt=2027-06-0${i}T10:00:00Z`,
      ]);
      expect(created.exitCode, show(created)).toBe(0);
    }
    const plain = await s.run(["events", "list"]);
    expect(plain.exitCode, show(plain)).toBe(0);
    const rows = json<{ code: string }[]>(plain);
    expect(Array.isArray(rows)).toBe(true);
    const all = await codes();
    expect(all.length).toBeGreaterThanOrEqual(10);

    const onePage = await s.run(["events", "list", "--page-size", "2", "--json"]);
    expect(json<unknown[]>(onePage)).toHaveLength(2);
    const secondPage = await s.run(["events", "list", "--page-size", "2", "--page", "2", "--json"]);
    expect(json<{ code: string }[]>(secondPage).map((e) => e.code)).toEqual(all.slice(2, 4));

    const paged = await s.run(["events", "list", "--all", "--page-size", "2", "--json"]);
    expect(paged.exitCode, show(paged)).toBe(0);
    // no progress bar when stderr is not a terminal
    expect(paged.stderr).toBe("");
    expect(json<{ code: string }[]>(paged).map((e) => e.code)).toEqual(all);

    const ordered = await s.run(["events", "list", "--order", "-startsAt,code", "--page-size", "100", "--json"]);
    const starts = json<{ startsAt: string }[]>(ordered).map((e) => e.startsAt);
    expect(starts).toEqual([...starts].sort().reverse());
    const badOrder = await s.run(["events", "list", "--order", "nosuchfield"]);
    expect(badOrder.exitCode, show(badOrder)).toBe(7);
    // a flag out of its range is a usage error, found before any call (the API answers 400 to pagesize=101)
    const tooBig = await s.run(["events", "list", "--page-size", "101"]);
    expect(tooBig.exitCode, show(tooBig)).toBe(2);
    expect(errorOf(tooBig).message).toContain("--page-size must be a whole number from 1 to 100");
  });

  it("shapes output with -o ndjson|csv|yaml|table and --fields", async () => {
    const all = await codes();

    const ndjson = await s.run(["events", "list", "--page-size", "100", "-o", "ndjson"]);
    expect(ndjson.exitCode, show(ndjson)).toBe(0);
    const lines = ndjson.stdout.trimEnd().split("\n");
    expect(lines.map((l) => JSON.parse(l).code)).toEqual(all);

    const csv = await s.run(["events", "list", "--page-size", "100", "-o", "csv", "--fields", "code,name"]);
    expect(csv.exitCode, show(csv)).toBe(0);
    const csvLines = csv.stdout.trimEnd().split("\n");
    expect(csvLines[0]).toBe("code,name");
    expect(csvLines.slice(1).map((l) => l.split(",")[0])).toEqual(all);
    expect(csvLines).toContain("SET-1,Kick-off meeting");

    const yaml = await s.run(["events", "list", "--page-size", "100", "--output", "yaml"]);
    expect(yaml.exitCode, show(yaml)).toBe(0);
    const parsed = parseYaml(yaml.stdout) as { code: string }[];
    expect(parsed.map((e) => e.code)).toEqual(all);

    const table = await s.run(["events", "list", "--page-size", "100", "-o", "table"]);
    expect(table.exitCode, show(table)).toBe(0);
    // compact: a header, then one line an event, no borders; `type`, empty in every row, left out
    expect(table.stdout).not.toMatch(/[┌│─]/);
    expect(table.stdout).toMatch(/^code +name +startsAt +location\n/);
    expect(table.stdout.trimEnd().split("\n")).toHaveLength(all.length + 1);
    for (const code of all) expect(table.stdout).toContain(code);
    // no colour codes when stdout is not a terminal
    expect(table.stdout).not.toContain("\u001b[");

    const fields = await s.run(["events", "list", "--page-size", "100", "--fields", "code,name", "--json"]);
    const shaped = json<Record<string, unknown>[]>(fields);
    expect(shaped.map((e) => e.code)).toEqual(all);
    for (const row of shaped) expect(Object.keys(row).sort()).toEqual(["code", "name"]);

    const one = await s.run(["events", "get", "SET-1", "-o", "yaml"]);
    expect(parseYaml(one.stdout)).toMatchObject({ code: "SET-1", customFields: { x: 1 } });
    const oneTable = await s.run(["events", "get", "SET-1", "-o", "table"]);
    expect(oneTable.stdout).toMatch(/^name +Kick-off meeting$/m);

    const badFormat = await s.run(["events", "list", "-o", "xml"]);
    expect(badFormat.exitCode, show(badFormat)).toBe(2);
    const badField = await s.run(["events", "list", "--fields", "code,nosuch"]);
    expect(badField.exitCode, show(badField)).toBe(7);
  });

  // --verbose: test/e2e/verbose.test.ts (the embedded server's log goes to the process's stderr)
  it("-q silences messages, colours follow FORCE_COLOR and NO_COLOR", async () => {
    const quiet = await s.run([...createEventArgv("QUIET", "Quiet"), "-q"]);
    expect(quiet.exitCode, show(quiet)).toBe(0);
    expect(quiet.stderr).toBe("");
    expect(json(quiet).code).toBe("QUIET");

    const forced = await s.run(["events", "get", "QUIET", "-o", "table"], { env: { FORCE_COLOR: "1" } });
    expect(forced.stdout).toContain("\u001b[");
    const noColor = await s.run(["events", "get", "QUIET", "-o", "table"], {
      env: { FORCE_COLOR: "1", NO_COLOR: "1" },
    });
    expect(noColor.stdout).not.toContain("\u001b[");
    const flag = await s.run(["events", "get", "QUIET", "-o", "table", "--no-color"], { env: { FORCE_COLOR: "1" } });
    expect(flag.stdout).not.toContain("\u001b[");
  });

  it("updates by merging the changes and bumps the version", async () => {
    const before = await get("SET-1");
    const result = await s.run([
      "events",
      "update",
      "SET-1",
      "--set",
      "location=Room 4",
      "--set",
      "customFields.y=2",
      "--set",
      "description=to be cleared",
    ]);
    expect(result.exitCode, show(result)).toBe(0);
    expect(result.stderr).toContain("version 2");
    const updated = json(result);
    expect(updated).toMatchObject({
      code: "SET-1",
      name: before.name,
      startsAt: before.startsAt,
      tags: before.tags,
      location: "Room 4",
      description: "to be cleared",
      customFields: { x: 1, y: 2, owner: { team: "sales" } },
      createdAt: before.createdAt,
      createdBy: before.createdBy,
      version: before.version + 1,
    });
    expect(await get("SET-1")).toEqual(updated);

    const yamlFile = join(s.sandbox.root, "changes.yaml");
    writeFileSync(yamlFile, "name: Renamed\ncustomFields:\n  z: 3\n");
    const cleared = await s.run(["events", "update", "SET-1", "--file", yamlFile, "--set", "description=null"]);
    expect(cleared.exitCode, show(cleared)).toBe(0);
    const after = json(cleared);
    expect(after).toMatchObject({ name: "Renamed", location: "Room 4", customFields: { x: 1, y: 2, z: 3 } });
    expect(after).not.toHaveProperty("description");
    expect(after.version).toBe(before.version + 2);

    const nothing = await s.run(["events", "update", "SET-1"]);
    expect(nothing.exitCode, show(nothing)).toBe(2);
    const missing = await s.run(["events", "update", "NO-SUCH-EVENT", "--set", "name=x"]);
    expect(missing.exitCode, show(missing)).toBe(3);
    const invalid = await s.run(["events", "update", "SET-1", "--set", "startsAt=soon"]);
    expect(invalid.exitCode, show(invalid)).toBe(7);
    expect((await get("SET-1")).version).toBe(before.version + 2);
  });

  it("updates in sequence each build on the previous version", async () => {
    const created = await s.run(["events", "create", "--set", "code=SEQ", "--set", "name=Seq", "--set", STARTS]);
    expect(created.exitCode, show(created)).toBe(0);
    const first = await s.run(["events", "update", "SEQ", "--set", "location=A"]);
    const second = await s.run(["events", "update", "SEQ", "--set", "organizer=Bo"]);
    expect(first.exitCode, show(first)).toBe(0);
    expect(second.exitCode, show(second)).toBe(0);
    expect(json(first).version).toBe(2);
    expect(json(second)).toMatchObject({ version: 3, location: "A", organizer: "Bo" });
    // a raw PUT in between, and the next update sees it
    const current = await get("SEQ");
    const { createdAt: _c, updatedAt: _u, createdBy: _b, version: _v, ...mutable } = current;
    const put = await s.run([
      "api",
      "PUT",
      "/api/crm/v1/events/SEQ",
      "--data",
      JSON.stringify({ ...mutable, type: "call" }),
    ]);
    expect(put.exitCode, show(put)).toBe(0);
    expect(json(put).version).toBe(4);
    const third = await s.run(["events", "update", "SEQ", "--set", "name=Seq 3"]);
    expect(json(third)).toMatchObject({ version: 5, type: "call", location: "A", organizer: "Bo", name: "Seq 3" });
  });

  it.runIf(mode === "remote")(
    "update sends If-Match, so a change made between its read and its write is not lost (exit 6)",
    async () => {
      const created = await s.run(["events", "create", "--set", "code=RACE", "--set", "name=Race", "--set", STARTS]);
      expect(created.exitCode, show(created)).toBe(0);
      const token = (await s.run(["auth", "token"])).stdout.trim();
      const upstream = s.server!.url;
      const seen: { ifMatch?: string; concurrent?: number } = {};

      // a proxy that, when the CLI's PUT arrives, first lets another client change the event
      const proxy: Server = createServer(async (req, res) => {
        const body = await readBody(req);
        if (req.method === "PUT" && /\/events\/RACE$/i.test(req.url ?? "") && seen.ifMatch === undefined) {
          seen.ifMatch = String(req.headers["if-match"]);
          const auth = { authorization: `Bearer ${token}` };
          const current = await fetch(`${upstream}/api/crm/v1/events/RACE`, { headers: auth });
          const {
            createdAt: _c,
            updatedAt: _u,
            createdBy: _b,
            version: _v,
            ...mutable
          } = (await current.json()) as Record<string, unknown>;
          const concurrent = await fetch(`${upstream}/api/crm/v1/events/RACE`, {
            method: "PUT",
            headers: { ...auth, "content-type": "application/json", "if-match": current.headers.get("etag")! },
            body: JSON.stringify({ ...mutable, name: "Changed meanwhile" }),
          });
          seen.concurrent = concurrent.status;
        }
        const headers = Object.fromEntries(
          Object.entries(req.headers).filter(([k]) => !["host", "connection", "content-length"].includes(k)),
        ) as Record<string, string>;
        const answer = await fetch(`${upstream}${req.url}`, {
          method: req.method,
          headers,
          ...(body && { body }),
        });
        const text = await answer.text();
        res.writeHead(answer.status, {
          "content-type": answer.headers.get("content-type") ?? "application/json",
          ...(answer.headers.get("etag") && { etag: answer.headers.get("etag")! }),
        });
        res.end(text);
      });
      await new Promise<void>((done) => proxy.listen(0, "127.0.0.1", done));
      try {
        const proxyUrl = `http://127.0.0.1:${(proxy.address() as { port: number }).port}`;
        const update = await s.run(["--server", proxyUrl, "events", "update", "RACE", "--set", "location=Lost?"], {
          env: { BIZCTL_TOKEN: token },
        });
        expect(seen).toEqual({ ifMatch: '"1"', concurrent: 200 });
        expect(update.exitCode, show(update)).toBe(6);
        expect(errorOf(update)).toMatchObject({ code: "precondition_failed", status: 412, exitCode: 6 });
        expect(errorOf(update).hint).toMatch(/read it again/);
      } finally {
        await new Promise<void>((done) => proxy.close(() => done()));
      }
      // the concurrent change survived and the CLI's did not overwrite it
      const after = await get("RACE");
      expect(after).toMatchObject({ name: "Changed meanwhile", version: 2 });
      expect(after).not.toHaveProperty("location");
    },
  );

  it("delete needs --yes without a terminal (exit 2, nothing deleted); with it the event is gone", async () => {
    const before = await get("DUP");
    const refused = await s.run(["events", "delete", "DUP"]);
    expect(refused.exitCode, show(refused)).toBe(2);
    expect(errorOf(refused).hint).toContain("--yes");
    expect(await get("DUP")).toEqual(before);
    const noInput = await s.run(["events", "delete", "DUP", "--no-input"]);
    expect(noInput.exitCode, show(noInput)).toBe(2);
    expect(await get("DUP")).toEqual(before);

    const deleted = await s.run(["events", "delete", "DUP", "--yes"]);
    expect(deleted.exitCode, show(deleted)).toBe(0);
    expect(deleted.stdout).toBe("");
    const gone = await s.run(["events", "get", "DUP"]);
    expect(gone.exitCode, show(gone)).toBe(3);
    expect(await codes()).not.toContain("DUP");
    const again = await s.run(["events", "delete", "DUP", "-y"]);
    expect(again.exitCode, show(again)).toBe(3);
  });
});
