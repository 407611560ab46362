/**
 * `bizctl users search TEXT` in both modes: best matches first as JSON and as the `users list`
 * table, accents ignored, paging as `users list` does, and a blank text refused before any
 * request (exit 2).
 */
import { beforeAll, describe, expect, it } from "vitest";
import { MODES, show } from "../helpers/cli.js";
import { expectScenario, type Scenario, useInProcessSession } from "../helpers/in-process.js";

const NO_COLOR = { NO_COLOR: "1" };
const userNames = (out: string) => (JSON.parse(out) as { userName: string }[]).map((user) => user.userName);

describe.each(MODES)("users search (%s)", (mode) => {
  const s = useInProcessSession(mode);
  beforeAll(async () => {
    for (const args of [
      ["--user-name", "lee", "--email", "pat@example.com"],
      ["--user-name", "ann.leeds", "--email", "ann@example.com", "--set", "name.familyName=Leeds"],
      ["--user-name", "bob", "--email", "bob@shop.example.org", "--set", "name.familyName=Kaleen"],
      ["--user-name", "carla", "--email", "carla@example.com", "--set", "externalId=HR-00417"],
      ["--user-name", "josé", "--email", "jm@mail.test", "--set", "name.familyName=Müller"],
    ]) {
      const created = await s.run(["users", "create", ...args, "--role", "member"]);
      expect(created.exitCode, show(created)).toBe(0);
    }
  });

  it.each<Scenario>([
    {
      name: "--json: the exact user name, then prefixes, then contains",
      args: ["users", "search", "lee", "--json"],
      wantExit: 0,
      wantStdout: (out) => expect(userNames(out)).toEqual(["lee", "ann.leeds", "bob"]),
    },
    {
      name: "-o json: part of an e-mail, in any case",
      args: ["users", "search", "SHOP.example", "-o", "json"],
      wantExit: 0,
      wantStdout: (out) => expect(userNames(out)).toEqual(["bob"]),
    },
    {
      name: "an externalId",
      args: ["users", "search", "hr-00417", "--json"],
      wantExit: 0,
      wantStdout: (out) => expect(userNames(out)).toEqual(["carla"]),
    },
    {
      name: "a user name's accent left out",
      args: ["users", "search", "Jose", "--json"],
      wantExit: 0,
      wantStdout: (out) => expect(userNames(out)).toEqual(["josé"]),
    },
    {
      name: "accents left out of a family name",
      args: ["users", "search", "muller", "--json"],
      wantExit: 0,
      wantStdout: (out) => expect(userNames(out)).toEqual(["josé"]),
    },
    {
      name: "with a filter",
      args: ["users", "search", "lee", "--filter", 'userName sw "b"', "--json"],
      wantExit: 0,
      wantStdout: (out) => expect(userNames(out)).toEqual(["bob"]),
    },
    {
      name: "no match: an empty list",
      args: ["users", "search", "no such person", "--json"],
      wantExit: 0,
      wantStdout: (out) => expect(JSON.parse(out)).toEqual([]),
    },
    {
      name: "--all: every page",
      args: ["users", "search", "lee", "--count", "1", "--all", "--json"],
      wantExit: 0,
      wantStdout: (out) => expect(userNames(out)).toEqual(["lee", "ann.leeds", "bob"]),
    },
    { name: "a blank text exits 2", args: ["users", "search", "   "], wantExit: 2, wantStdout: "" },
    { name: "an empty text exits 2", args: ["users", "search", ""], wantExit: 2, wantStdout: "" },
    { name: "no text exits 2", args: ["users", "search"], wantExit: 2, wantStdout: "" },
  ])("piped: $name", async (scenario) => {
    await expectScenario(s, scenario);
  });

  it.each<Scenario>([
    {
      name: "the users list table, best matches first",
      args: ["users", "search", "lee"],
      wantExit: 0,
      wantStdout: (out) => {
        const lines = out.split("\n");
        expect(lines[0]).toMatch(/^id\s+userName\s+emails\s+roles\b/);
        const order = ["lee", "ann.leeds", "bob"].map((name) =>
          lines.findIndex((line) => new RegExp(`\\s${name.replace(".", "\\.")}\\s`).test(line)),
        );
        expect(order.every((at) => at > 0)).toBe(true);
        expect(order).toEqual([...order].sort((a, b) => a - b));
      },
    },
    {
      name: "a page says how to read the next",
      args: ["users", "search", "lee", "--count", "1"],
      wantExit: 0,
      wantStderr: "1 of 3: --start-index 2, or --all\n",
    },
    {
      name: "no match says so",
      args: ["users", "search", "no such person"],
      wantExit: 0,
      wantStdout: "",
      wantStderr: "No users.\n",
    },
  ])("on a terminal: $name", async (scenario) => {
    await expectScenario(s, { ...scenario, tty: true, env: NO_COLOR });
  });
});
