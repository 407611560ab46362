import { describe, expect, it } from "vitest";
import { errorOf, MODES, show } from "../helpers/cli.js";
import { useInProcessSession } from "../helpers/in-process.js";

/** Issue 15 part 6: a type error names the field and what it expected, once, not every anyOf branch. */

const START = "startsAt=2027-02-01T10:00:00Z";

const SCENARIOS: { name: string; args: string[]; path: string; says: RegExp }[] = [
  {
    name: "a nullable timestamp",
    args: ["events", "create", "--set", "code=V1", "--set", "name=x", "--set", START, "--set", "endsAt=tomorrow"],
    path: "/endsAt",
    says: /must be an RFC 3339 date-time such as 2027-01-10T09:00:00Z or null/,
  },
  {
    name: "a nullable boolean",
    args: [
      "api",
      "POST",
      "/api/crm/v1/events",
      "--data",
      '{"code":"V2","name":"x","startsAt":"2027-02-01T10:00:00Z","allDay":"maybe"}',
    ],
    path: "/allDay",
    says: /must be a boolean or null/,
  },
  {
    name: "a choice of literals inside a list",
    args: [
      "api",
      "POST",
      "/api/crm/v1/events",
      "--data",
      '{"code":"V3","name":"x","startsAt":"2027-02-01T10:00:00Z","attendees":[{"name":"a","email":"a@example.com","status":"maybe"}]}',
    ],
    path: "/attendees/0/status",
    says: /must be one of "needs-action", "accepted", "declined", "tentative"/,
  },
  {
    name: "a SCIM role",
    args: ["api", "POST", "/Resources", "--data", '{"resourceType":"User","userName":"v4","roles":[{"value":"boss"}]}'],
    path: "/roles/0/value",
    says: /must be one of "admin", "support", "member"/,
  },
  {
    name: "a lower-case resource type, sent raw",
    args: ["api", "POST", "/Resources", "--data", '{"resourceType":"room","floor":3}'],
    path: "/resourceType",
    says: /'room' is not a resource type: a type name starts with a capital letter.*did you mean 'Room'\?/,
  },
];

describe.each(MODES)("validation messages (%s)", (mode) => {
  const s = useInProcessSession(mode);

  it.each(SCENARIOS)("piped: $name is one readable issue", async ({ args, path, says }) => {
    const result = await s.run(args);
    expect(result.exitCode, show(result)).toBe(7);
    const error = errorOf(result);
    expect(error.errors).toEqual([{ path, message: expect.stringMatching(says) }]);
    expect(error.message).not.toMatch(/anyOf|union value|must be null|must match pattern/);
  });

  it.each(SCENARIOS)("on a terminal: $name is one line naming the field", async ({ args, path, says }) => {
    const result = await s.run(args, { tty: true, env: { NO_COLOR: "1" } });
    expect(result.exitCode, show(result)).toBe(7);
    expect(result.stdout).toBe("");
    const lines = result.stderr.split("\n").filter((l) => l.startsWith("error:"));
    expect(lines, result.stderr).toHaveLength(1);
    expect(lines[0]).toContain(`${path}: `);
    expect(lines[0]).toMatch(says);
    expect(lines[0]).not.toMatch(/anyOf|must be null|must match pattern/);
  });
});
