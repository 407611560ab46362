import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { UserLine } from "../../src/cli/user-records.js";
import { makePlan, type SyncPlan } from "../../src/commands/users/sync-plan.js";

/**
 * The plan of `users sync` against an independent model of "the file merged into the directory"
 * (issue 44): whatever the directory and the file, applying the plan leaves exactly what the
 * model says, and planning again on the result finds nothing to do.
 */

type User = Record<string, unknown>;

const NAMES = ["ana", "bo", "cy", "dee", "eli", "fay", "gus", "hal"];
const SOURCES = [undefined, "hr", "payroll"];
const TITLES = ["Clerk", "Engineer", "Lead", "Ingénieur, R&D"];

const directoryUser = fc.record({
  userName: fc.constantFrom(...NAMES),
  title: fc.option(fc.constantFrom(...TITLES), { nil: undefined }),
  department: fc.option(fc.constantFrom("Sales", "Support"), { nil: undefined }),
  active: fc.boolean(),
  source: fc.constantFrom(...SOURCES),
  role: fc.constantFrom("member", "support"),
});
const fileUser = fc.record({
  userName: fc.constantFrom(...NAMES),
  title: fc.option(fc.constantFrom(...TITLES), { nil: undefined }),
  department: fc.option(fc.constantFrom("Sales", "Support", "Finance"), { nil: undefined }),
});

type DirectoryUser = typeof directoryUser extends fc.Arbitrary<infer T> ? T : never;
type FileUser = typeof fileUser extends fc.Arbitrary<infer T> ? T : never;

function asDirectory(users: DirectoryUser[]): User[] {
  const seen = new Set<string>();
  return users
    .filter((user) => !seen.has(user.userName) && seen.add(user.userName))
    .map((user, index) => ({
      id: `id-${index}`,
      userName: user.userName,
      ...(user.title !== undefined && { title: user.title }),
      ...(user.department !== undefined && { department: user.department }),
      active: user.active,
      roles: [{ value: user.role }],
      ...(user.source !== undefined && { syncSource: user.source }),
      meta: { version: `W/"${index}"`, lastModified: "2026-01-01T00:00:00Z" },
    }));
}

/** The file as lines, the way readUsers gives them: an empty cell is an absent attribute. */
function asLines(users: FileUser[]): UserLine[] {
  const seen = new Set<string>();
  return users
    .filter((user) => !seen.has(user.userName) && seen.add(user.userName))
    .map((user, index) => ({
      line: index + 2,
      user: Object.fromEntries(Object.entries(user).filter(([, value]) => value !== undefined)),
    }));
}

/** The model, written apart from the planner: what the directory should be after the sync of `source`. */
function model(directory: User[], lines: UserLine[], source: string, refused: Set<unknown>): Map<string, User> {
  const file = new Map(
    lines.flatMap((line) =>
      "user" in line && !refused.has(line.user.userName) ? [[line.user.userName as string, line.user]] : [],
    ),
  );
  const result = new Map<string, User>();
  for (const user of directory) {
    const listed = file.get(user.userName as string);
    const owner = user.syncSource;
    if (owner !== undefined && owner !== source) result.set(user.userName as string, user);
    else if (listed) {
      result.set(user.userName as string, {
        ...user,
        ...listed,
        syncSource: source,
        active: true,
      });
    } else if (owner === source && lines.length > 0) result.set(user.userName as string, { ...user, active: false });
    else result.set(user.userName as string, user);
  }
  for (const [userName, user] of file) if (!result.has(userName)) result.set(userName, { ...user, syncSource: source });
  return result;
}

/** The plan carried out on the directory in memory, as the server would. */
function apply(directory: User[], plan: SyncPlan): Map<string, User> {
  const byId = new Map(directory.map((user) => [user.id as string, { ...user }]));
  for (const update of plan.updates) {
    const user = byId.get(update.id) as User;
    for (const change of update.changes) user[change.attribute] = change.new;
  }
  for (const leaver of plan.deactivations) (byId.get(leaver.id) as User).active = false;
  const result = new Map([...byId.values()].map((user) => [user.userName as string, user]));
  for (const create of plan.creates) result.set(create.userName, create.user);
  return result;
}

const comparable = (users: Map<string, User>) =>
  Object.fromEntries(
    [...users].map(([name, { id: _id, meta: _meta, active, ...rest }]) => [
      name,
      // a created User is active unless the file says otherwise
      { ...rest, active: active ?? true },
    ]),
  );

describe("users sync plans", () => {
  it("applying a plan leaves the directory equal to the model, and a second plan is empty", () => {
    fc.assert(
      fc.property(fc.array(directoryUser, { maxLength: 8 }), fc.array(fileUser, { maxLength: 8 }), (dir, rows) => {
        const directory = asDirectory(dir);
        const lines = asLines(rows);
        const plan = makePlan(lines, directory, { source: "hr", fileSha256: "x" });
        // another source's users named by the file are refused, not planned
        const refused = new Set(plan.failures.map((failure) => failure.userName));
        const expected = model(directory, lines, "hr", refused);
        const after = apply(directory, plan);
        expect(comparable(after)).toEqual(comparable(expected));
        // nothing for the users the file leaves as they are, and nothing the second time
        const again = makePlan(
          lines,
          [...after.values()].map((user, index) => ({ id: `again-${index}`, meta: {}, ...user })),
          { source: "hr", fileSha256: "x" },
        );
        expect([again.creates, again.updates, again.deactivations]).toEqual([[], [], []]);
        for (const update of plan.updates) expect(update.changes.length).toBeGreaterThan(0);
      }),
      { numRuns: 300 },
    );
  });

  it("an unreadable line without a user name holds every deactivation", () => {
    const directory = asDirectory([
      { userName: "ana", title: "Clerk", department: undefined, active: true, source: "hr", role: "member" },
    ]);
    const plan = makePlan([{ line: 2, error: "not CSV from here on" }], directory, { source: "hr", fileSha256: "x" });
    expect(plan.deactivations).toEqual([]);
    expect(plan.leaversHeld).toMatch(/no user is deactivated/);
  });
});
