import { describe, expect, it } from "vitest";
import { json, MODES, show } from "../helpers/cli.js";
import { useInProcessSession } from "../helpers/in-process.js";

/** Scripts run twice: creating what exists and deleting what is gone succeed when asked to. */

const START = "--set=startsAt=2027-02-01T10:00:00Z";

describe.each(MODES)("commands that are safe to run twice (%s)", (mode) => {
  const s = useInProcessSession(mode);

  const twice = async (args: string[]) => {
    const first = await s.run(args);
    expect(first.exitCode, show(first)).toBe(0);
    const second = await s.run(args);
    expect(second.exitCode, show(second)).toBe(0);
    return { first, second };
  };

  it("events create --if-not-exists leaves the existing event as it is", async () => {
    const { first, second } = await twice([
      "events",
      "create",
      "--set",
      "code=RERUN",
      "--set",
      "name=First",
      START,
      "--if-not-exists",
      "--json",
    ]);
    expect(json(second)).toEqual(json(first));
    expect(second.stderr).toMatch(/already exists/);
    const changed = await s.run([
      "events",
      "create",
      "--set",
      "code=RERUN",
      "--set",
      "name=Other",
      START,
      "--if-not-exists",
      "--json",
    ]);
    expect(json(changed).name).toBe("First");
    const plain = await s.run(["events", "create", "--set", "code=RERUN", "--set", "name=First", START]);
    expect(plain.exitCode, show(plain)).toBe(6);
  });

  it("events delete takes several codes, and --ignore-not-found makes a second run succeed", async () => {
    for (const code of ["DEL-A", "DEL-B"]) {
      const created = await s.run(["events", "create", "--set", `code=${code}`, "--set", "name=x", START]);
      expect(created.exitCode, show(created)).toBe(0);
    }
    const { second } = await twice(["events", "delete", "DEL-A", "DEL-B", "--yes", "--ignore-not-found"]);
    expect(second.stderr).toMatch(/No event DEL-A; nothing to delete/);
    const strict = await s.run(["events", "delete", "DEL-A", "--yes"]);
    expect(strict.exitCode, show(strict)).toBe(3);
  });

  it("an unknown code stops events delete before anything is deleted", async () => {
    const created = await s.run(["events", "create", "--set", "code=KEEP", "--set", "name=x", START]);
    expect(created.exitCode, show(created)).toBe(0);
    const result = await s.run(["events", "delete", "KEEP", "NOPE", "--yes"]);
    expect(result.exitCode, show(result)).toBe(3);
    expect((await s.run(["events", "get", "KEEP"])).exitCode).toBe(0);
  });

  it("users create --if-not-exists prints the existing user and sets no password", async () => {
    const { first, second } = await twice(["users", "create", "--user-name", "twice", "--if-not-exists", "--json"]);
    expect(json(first).oneTimePassword).toEqual(expect.any(String));
    expect(json(second)).not.toHaveProperty("oneTimePassword");
    expect(json(second).id).toBe(json(first).id);
  });

  it("resources create --if-not-exists and resources/users delete --ignore-not-found", async () => {
    const { first } = await twice([
      "resources",
      "create",
      "--type",
      "User",
      "--set",
      "userName=again",
      "--if-not-exists",
      "--json",
    ]);
    const id = json(first).id as string;
    const room = await s.run(["resources", "create", "--type", "Room", "--set", "floor=2", "--json"]);
    await twice(["resources", "delete", id, json(room).id, "--yes", "--ignore-not-found"]);
    await twice(["users", "delete", "twice", "--yes", "--ignore-not-found"]);
    expect((await s.run(["users", "delete", "twice", "--yes"])).exitCode).toBe(3);
  });
});
