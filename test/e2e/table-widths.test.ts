/**
 * Every list the CLI prints, in a real pseudo-terminal of 0, 40, 80 and 200 columns (issue 32):
 * a terminal that reports 0 columns (`script`, many CI and container terminals) sets no limit,
 * a bold header never leaks as `^[[1m` text nor counts as width, identifier columns (ids,
 * codes, keys, tokens, an audit record's action) are never cut, and a footer comes after the
 * table. At 80 columns a table fits by choosing what it shows (issue 47): a column empty in
 * every row is left out, a moment is a relative time ("3 minutes ago", the exact time stays in
 * JSON), and the least important columns go before any is cut to a few characters.
 */
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import stringWidth from "string-width";
import { beforeAll, describe, expect, it } from "vitest";
import { ADMIN, json, show, useSession } from "../helpers/cli.js";
import { inTerminal } from "../helpers/pty.js";

const LONG_CODE = "QUARTERLY-BUSINESS-REVIEW-2027-Q1";
const WIDTHS = [0, 40, 80, 200];

interface Seen {
  userId: string;
  roomId: string;
  consumerId: string;
  consumerKey: string;
  oauthToken: string;
  apiTokenId: string;
  sessionId: string;
  mailId: string;
  outboxId: string;
  /** the two newest audit records */
  audit: { id: string; time: string; action: string }[];
  /** the newest record of the admin's recent activity */
  activity: { time: string; action: string };
}

interface ListScenario {
  name: string;
  args: string[];
  /** what must show whole on the terminal */
  whole: (seen: Seen) => string[];
  /** where the table starts, when a record comes first */
  table?: string;
  /** a moment column's exact time (shown relative on a terminal) */
  moment?: (seen: Seen) => string;
  /** a column every row leaves empty, left out at every width */
  emptyColumn?: string;
  /** false: its identifiers alone are wider than 80 columns */
  fits80?: boolean;
  /** a footer on stderr that must come after the table's last row (which holds the text `lastRow` gives) */
  footer?: { text: string; lastRow: (seen: Seen) => string };
}

const LISTS: ListScenario[] = [
  { name: "events list", args: ["events", "list"], whole: () => [LONG_CODE] },
  { name: "users list", args: ["users", "list"], whole: (s) => [s.userId] },
  {
    name: "users list of users without e-mail",
    args: ["users", "list", "--filter", 'userName eq "admin"'],
    whole: (s) => [s.userId],
    emptyColumn: "emails",
  },
  {
    name: "users get (recent activity)",
    args: ["users", "get", ADMIN],
    whole: (s) => [s.userId, s.activity.action],
    moment: (s) => s.activity.time,
    // the record above it holds `meta`, one JSON value wider than 200 columns
    table: "Recent activity:",
  },
  { name: "users sessions", args: ["users", "sessions", ADMIN], whole: (s) => [s.sessionId] },
  { name: "users tokens", args: ["users", "tokens", ADMIN], whole: (s) => [s.apiTokenId] },
  { name: "resources list", args: ["resources", "list", "--type", "Room"], whole: (s) => [s.roomId] },
  {
    name: "audit list",
    args: ["audit", "list", "--page-size", "2"],
    whole: (s) => s.audit.flatMap((r) => [r.id, r.action]),
    moment: (s) => s.audit[0]!.time,
    footer: { text: "More records", lastRow: (s) => s.audit[1]!.id },
  },
  {
    name: "audit tail",
    args: ["audit", "tail", "-n", "2"],
    whole: (s) => s.audit.flatMap((r) => [r.id, r.action]),
    moment: (s) => s.audit[0]!.time,
    footer: { text: "Resume with", lastRow: (s) => s.audit[0]!.id },
  },
  { name: "auth sessions", args: ["auth", "sessions"], whole: (s) => [s.sessionId] },
  { name: "auth tokens list", args: ["auth", "tokens", "list"], whole: (s) => [s.apiTokenId] },
  {
    name: "oauth tokens list",
    args: ["oauth", "tokens", "list"],
    whole: (s) => [s.oauthToken, s.consumerKey],
    fits80: false,
  },
  { name: "oauth consumers list", args: ["oauth", "consumers", "list"], whole: (s) => [s.consumerId, s.consumerKey] },
  { name: "profile list", args: ["profile", "list"], whole: () => [] },
  { name: "server outbox list", args: ["server", "outbox", "list"], whole: (s) => [s.outboxId] },
  { name: "server mail-queue", args: ["server", "mail-queue"], whole: (s) => [s.mailId] },
];

describe("every list on a real terminal", () => {
  const s = useSession("embedded");
  let seen: Seen;

  const run = async (args: string[], input?: string) => {
    const result = await s.run(args, { input });
    expect(result.exitCode, show(result)).toBe(0);
    return result;
  };

  beforeAll(async () => {
    const file = join(s.sandbox.root, "events.json");
    const events = Array.from({ length: 3 }, (_, i) => ({
      code: i === 0 ? LONG_CODE : `T${i}`,
      name: `A quarterly business review with the regional directors ${i}`,
      startsAt: `2027-04-0${i + 1}T10:00:00Z`,
      location: "The large room on the fourth floor, north building",
    }));
    await writeFile(file, JSON.stringify(events));
    await run(["events", "import", file]);
    const room = json(await run(["resources", "create", "--set", "resourceType=Room", "--set", "name=Room 4.12"]));
    await run(["users", "create", "--user-name", "jo", "--email", "jo@example.com", "--invite"]);
    const apiToken = json(
      await run(["auth", "tokens", "create", "--name", "the laptop of the support desk", "--scope", "audit:read"]),
    );
    const consumer = json(await run(["oauth", "consumers", "create", "--name", "Printer in the north building"]));
    await run(
      ["oauth", "flow", "--consumer-key", consumer.consumerKey, "--consumer-secret-stdin"],
      `${consumer.consumerSecret}\n`,
    );
    const oauthTokens = json(await run(["oauth", "tokens", "list"]));
    const sessions = json(await run(["auth", "sessions"]));
    const audit = json(await run(["audit", "list", "--page-size", "2"]));
    const user = json(await run(["users", "get", ADMIN]));
    const filter = `actor.id eq "${user.id}" or target.id eq "${user.id}"`;
    const activity = json(await run(["audit", "list", "--filter", filter, "--page-size", "1"]));
    seen = {
      userId: user.id,
      roomId: room.id,
      consumerId: consumer.id,
      consumerKey: consumer.consumerKey,
      oauthToken: oauthTokens[0].token,
      apiTokenId: apiToken.id,
      sessionId: sessions[0].id,
      mailId: json(await run(["server", "mail-queue"]))[0].id,
      outboxId: json(await run(["server", "outbox", "list"]))[0].id,
      audit,
      activity: activity[0],
    };
  }, 180_000);

  describe.each(LISTS)("$name", (list) => {
    it.each(WIDTHS)("at %i columns", async (columns) => {
      const result = await inTerminal({ ...s.env, PTY_COLUMNS: String(columns) }, list.args);
      expect(result.error, result.raw).toBeUndefined();
      expect(result.exitCode, result.raw).toBe(0);
      // the header's bold is an escape sequence, never its visible form
      expect(result.output).not.toContain("^[");
      for (const value of list.whole(seen)) expect(result.output, `${value} whole`).toContain(value);
      // no limit when the terminal cannot tell, and 200 columns are enough for every list
      const table = result.output.slice(list.table ? result.output.indexOf(list.table) : 0);
      if (columns === 0) expect(result.output, "nothing cut").not.toContain("…");
      if (columns === 200) expect(table, "nothing cut").not.toContain("…");
      if (columns === 80) {
        // columns go before any is cut to a few characters ("succ…")
        const cut = table.split(/\r?\n/).flatMap((line) => line.split(/\s{2,}/).filter((c) => c.endsWith("…")));
        for (const c of cut) expect(stringWidth(c), `${c} cut short`).toBeGreaterThanOrEqual(10);
        if (list.fits80 !== false) {
          for (const line of table.split(/\r?\n/)) expect(stringWidth(line), line).toBeLessThanOrEqual(80);
        }
      }
      if (list.moment) {
        expect(result.output, "a relative time").toMatch(/ ago\b/);
        expect(result.output, "not the exact time").not.toContain(list.moment(seen));
      }
      if (list.emptyColumn) expect(result.output, "no empty column").not.toContain(list.emptyColumn);
      if (list.footer) {
        const lastRow = result.output.indexOf(list.footer.lastRow(seen));
        expect(lastRow).toBeGreaterThanOrEqual(0);
        expect(result.output.indexOf(list.footer.text), result.output).toBeGreaterThan(lastRow);
      }
    });
  });
});
