import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { json, MODES, show } from "../helpers/cli.js";
import { useInProcessSession } from "../helpers/in-process.js";

/**
 * A property of `users sync` through the CLI and a real server (issue 44): for a random
 * directory (users of the source, of another source, made by hand; active or not; member or
 * support) and a random HR file, the directory after the sync equals an independent model of
 * "the file merged into the directory", and a second sync writes nothing.
 */

// biome-ignore lint/suspicious/noExplicitAny: the tests assert the shape with expect()
type Json = any;
const NAMES = ["ana", "bo", "cy", "dee", "eli", "fay"];

const directoryUser = fc.record({
  name: fc.constantFrom(...NAMES),
  title: fc.option(fc.constantFrom("Clerk", "Ingénieur, R&D"), { nil: undefined }),
  active: fc.boolean(),
  owner: fc.constantFrom("source", "other", "hand"),
  support: fc.boolean(),
});
const fileRow = fc.record({
  name: fc.constantFrom(...NAMES),
  title: fc.option(fc.constantFrom("Clerk", "Lead", "Ingénieur, R&D"), { nil: undefined }),
  department: fc.option(fc.constantFrom("Sales", "Support, EMEA"), { nil: undefined }),
});

type Person = { title?: string; department?: string; active: boolean; syncSource?: string; roles: string[] };

const unique = <T extends { name: string }>(items: T[]) => {
  const seen = new Set<string>();
  return items.filter((item) => !seen.has(item.name) && seen.add(item.name));
};
const csvCell = (value?: string) => (value === undefined ? "" : `"${value.replaceAll('"', '""')}"`);

describe.each(MODES)("users sync, a property (%s)", (mode) => {
  const s = useInProcessSession(mode);
  let round = 0;

  it("the directory after a sync equals the model of the file merged into it", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(directoryUser, { maxLength: 6 }),
        fc.array(fileRow, { minLength: 1, maxLength: 6 }),
        async (dirRows, rows) => {
          const tag = `p${++round}`;
          const source = `src${round}`;
          const userName = (name: string) => `${tag}-${name}`;
          const directory = unique(dirRows);
          const file = unique(rows);
          // the directory, as the property draws it
          if (directory.length > 0) {
            const seed = directory
              .map((user) =>
                JSON.stringify({
                  userName: userName(user.name),
                  ...(user.title !== undefined && { title: user.title }),
                  active: user.active,
                  roles: [{ value: user.support ? "support" : "member" }],
                  ...(user.owner !== "hand" && { syncSource: user.owner === "source" ? source : `${source}-other` }),
                }),
              )
              .join("\n");
            const seedFile = join(s.sandbox.root, `${tag}-seed.ndjson`);
            await writeFile(seedFile, `${seed}\n`);
            const seeded = await s.run(["users", "import", seedFile, "--json"]);
            expect(seeded.exitCode, show(seeded)).toBe(0);
          }
          const csv = [
            "User Name,Title,Department",
            ...file.map((row) => `${userName(row.name)},${csvCell(row.title)},${csvCell(row.department)}`),
          ].join("\r\n");
          const hrFile = join(s.sandbox.root, `${tag}-hr.csv`);
          await writeFile(hrFile, `\uFEFF${csv}\r\n`);

          // the model, from the drawn values alone
          const model = new Map<string, Person>();
          const listed = new Map(file.map((row) => [row.name, row]));
          for (const user of directory) {
            const owner = user.owner === "source" ? source : user.owner === "other" ? `${source}-other` : undefined;
            const person: Person = {
              ...(user.title !== undefined && { title: user.title }),
              active: user.active,
              ...(owner && { syncSource: owner }),
              roles: [user.support ? "support" : "member"],
            };
            const row = listed.get(user.name);
            if (user.owner === "other") model.set(user.name, person);
            else if (row) {
              model.set(user.name, {
                ...person,
                ...(row.title !== undefined && { title: row.title }),
                ...(row.department !== undefined && { department: row.department }),
                syncSource: source,
                active: true,
              });
            } else if (user.owner === "source") model.set(user.name, { ...person, active: false });
            else model.set(user.name, person);
          }
          for (const row of file) {
            if (model.has(row.name)) continue;
            model.set(row.name, {
              ...(row.title !== undefined && { title: row.title }),
              ...(row.department !== undefined && { department: row.department }),
              active: true,
              syncSource: source,
              roles: ["member"],
            });
          }

          const synced = await s.run(["users", "sync", hrFile, "--source", source, "--json"]);
          const claimsOther = file.some((row) => directory.find((u) => u.name === row.name)?.owner === "other");
          expect(synced.exitCode, show(synced)).toBe(claimsOther ? 6 : 0);

          const read = async () => {
            const listedNow = await s.run(["users", "list", "--filter", `userName sw "${tag}-"`, "--all", "--json"]);
            expect(listedNow.exitCode, show(listedNow)).toBe(0);
            return json<Json[]>(listedNow);
          };
          const after = await read();
          const actual = new Map<string, Person>(
            after.map((user) => [
              String(user.userName).slice(tag.length + 1),
              {
                ...(user.title !== undefined && { title: user.title }),
                ...(user.department !== undefined && { department: user.department }),
                active: user.active !== false,
                ...(user.syncSource !== undefined && { syncSource: user.syncSource }),
                roles: (user.roles ?? [{ value: "member" }]).map((role: Json) => role.value),
              },
            ]),
          );
          expect(Object.fromEntries(actual)).toEqual(Object.fromEntries(model));

          // a second run writes nothing
          const again = await s.run(["users", "sync", hrFile, "--source", source, "--json"]);
          expect(json<Json>(again)).toMatchObject({ created: 0, updated: 0, deactivated: 0, deleted: 0 });
          const versions = (users: Json[]) => users.map((user) => [user.userName, user.meta.version]).sort();
          expect(versions(await read())).toEqual(versions(after));
        },
      ),
      { numRuns: 8 },
    );
  }, 180_000);
});
