import { describe, expect, it } from "vitest";
import { relativeTime, shownOnTerminal } from "../../src/cli/table-fit.js";

/** How a moment reads on a terminal (issue 47), its formatter made on first use (issue 46's start-up). */
describe("relativeTime", () => {
  const now = Date.parse("2026-11-29T12:00:00Z");
  it.each([
    ["2026-11-29T11:57:00Z", "3 minutes ago"],
    ["2026-11-29T12:00:00Z", "now"],
    ["2026-12-01T12:00:00Z", "in 2 days"],
    ["2026-11-28T12:00:00Z", "yesterday"],
    ["2026-09-01T10:00:00Z", "2026-09-01"],
    ["not a time", "not a time"],
  ])("%s reads as %s", (text, expected) => {
    expect(relativeTime(text, now)).toBe(expected);
  });

  it("leaves an event's start as an instant without its zero seconds", () => {
    expect(shownOnTerminal("startsAt", "2027-04-01T10:00:00Z")).toBe("2027-04-01T10:00Z");
  });
});
