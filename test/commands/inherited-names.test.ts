/**
 * Through the commands, in both modes: a name every JavaScript object inherits (`__proto__`,
 * `constructor`, `toString`, ...) given to a verb is a plain name. Where the server or the CLI
 * must know it, it is refused like any unknown name (exit 7 with the field named, or 2 for a
 * profile), never a server failure (8) or an empty success; where any name goes (a custom
 * resource's attribute) it is one. Text that is not well-formed Unicode is refused with exit 7.
 */
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { errorOf, json, MODES, show } from "../helpers/cli.js";
import { useInProcessSession } from "../helpers/in-process.js";

const INHERITED = ["__proto__", "constructor", "toString", "hasOwnProperty", "valueOf"];

describe.each(MODES)("names every object inherits (%s)", (mode) => {
  const s = useInProcessSession(mode);
  beforeAll(async () => {
    const created = await s.run([
      "events",
      "create",
      "--set",
      "code=N1",
      "--set",
      "name=One",
      "--set",
      "startsAt=2027-03-01T10:00:00Z",
    ]);
    expect(created.exitCode, show(created)).toBe(0);
    for (const value of ["b", "a"]) {
      const file = join(s.sandbox.root, `shelf-${value}.json`);
      await writeFile(file, JSON.stringify({ resourceType: "Shelf", label: value, constructor: value }));
      const shelf = await s.run(["resources", "create", "--type", "Shelf", "--file", file]);
      expect(shelf.exitCode, show(shelf)).toBe(0);
    }
  });

  /** [what, the arguments with NAME where the name goes, the exit code, the error code] */
  const REFUSED: [string, string[], number, string][] = [
    ["events list --order", ["events", "list", "--order", "NAME"], 7, "validation_failed"],
    ["events list --order, descending", ["events", "list", "--order", "name,-NAME"], 7, "validation_failed"],
    ["events list --fields", ["events", "list", "--fields", "NAME"], 7, "validation_failed"],
    ["events get --fields", ["events", "get", "N1", "--fields", "code,NAME"], 7, "validation_failed"],
    ["events list --filter", ["events", "list", "--filter", "NAME pr"], 7, "invalid_filter"],
    ["audit list --filter", ["audit", "list", "--filter", 'NAME eq "x"'], 7, "invalid_filter"],
    ["resources list --fields", ["resources", "list", "--type", "User", "--fields", "id,NAME"], 7, "unknown_field"],
    ["users list --fields", ["users", "list", "--fields", "userName,NAME"], 7, "unknown_field"],
    ["users get --fields, nested", ["users", "get", "admin", "--fields", "name.NAME"], 7, "unknown_field"],
    ["profile show", ["profile", "show", "NAME"], 2, "usage"],
    ["profile use", ["profile", "use", "NAME"], 2, "usage"],
    ["--profile", ["--profile", "NAME", "events", "list"], 2, "usage"],
  ];

  describe.each(REFUSED)("%s", (_what, args, exitCode, code) => {
    it.each(INHERITED)("%s: refused as an unknown name", async (name) => {
      const result = await s.run(args.map((arg) => arg.replace("NAME", name)));
      expect(result.exitCode, show(result)).toBe(exitCode);
      expect(result.stdout).toBe("");
      expect(errorOf(result).code).toBe(code);
      expect(errorOf(result).message).toContain(code === "invalid_filter" ? name.toLowerCase() : name);
    });
  });

  it.each(INHERITED)("resources list --sort-by %s sorts by the attribute of that name", async (name) => {
    const result = await s.run(["resources", "list", "--type", "Shelf", "--sort-by", name, "--json"]);
    expect(result.exitCode, show(result)).toBe(0);
    const labels = json<{ label: string }[]>(result).map((r) => r.label);
    // only `constructor` is held (as "a" and "b"); under any other name nothing has it
    if (name === "constructor") expect(labels).toEqual(["a", "b"]);
    else expect(labels.sort()).toEqual(["a", "b"]);
  });

  it("resources list --fields constructor shows the attribute a custom resource holds", async () => {
    const result = await s.run([
      "resources",
      "list",
      "--type",
      "Shelf",
      "--sort-by",
      "label",
      "--fields",
      "constructor",
    ]);
    expect(result.exitCode, show(result)).toBe(0);
    expect(json(result)).toEqual([{ constructor: "a" }, { constructor: "b" }]);
  });

  it("events import reads data.constructor by its content, as any unknown extension", async () => {
    const file = join(s.sandbox.root, "data.constructor");
    await writeFile(file, JSON.stringify([{ code: "N2", name: "Two", startsAt: "2027-03-02T10:00:00Z" }]));
    const result = await s.run(["events", "import", file, "--json"]);
    expect(result.exitCode, show(result)).toBe(0);
    expect(json(result)).toMatchObject({ created: 1, failed: 0 });
  });

  it("users import: a column name.__proto__.x is a member __proto__ of the name, which the server refuses", async () => {
    const file = join(s.sandbox.root, "users.csv");
    await writeFile(file, "userName,name.__proto__.polluted\nproto.one,yes\n");
    const result = await s.run(["users", "import", file, "--json"]);
    expect(result.exitCode, show(result)).toBe(7);
    const { failures } = json<{ failures: { userName: string; problem: string; message: string }[] }>(result);
    expect(failures.map((f) => [f.userName, f.problem])).toEqual([["proto.one", "validation_failed"]]);
    // the member stayed in the name: the prototype of the CLI's objects, and so the request, never had it
    expect(failures[0]!.message).toMatch(/prototype/);
    expect(failures[0]!.message).not.toContain("/polluted");
  });

  it("events create with a lone surrogate in a file exits 7 naming the field", async () => {
    const file = join(s.sandbox.root, "lone.json");
    await writeFile(file, '{"code":"N3","name":"\\ud800x","startsAt":"2027-03-03T10:00:00Z"}');
    const result = await s.run(["events", "create", "--file", file]);
    expect(result.exitCode, show(result)).toBe(7);
    expect(errorOf(result).code).toBe("validation_failed");
    expect(errorOf(result).message).toMatch(/\/name: .*surrogate/);
    expect((await s.run(["events", "get", "N3"])).exitCode).toBe(3);
  });
});
