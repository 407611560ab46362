import { describe, expect, it } from "vitest";
import { chosenProfile, profileFlag, scoped } from "../../src/cli/hints.js";

describe("hints name the profile in use (issue 32)", () => {
  it.each([
    ["a quoted command", "run 'bizctl auth login'", "prod", "run 'bizctl --profile prod auth login'"],
    [
      "every command of the text",
      "create one ('bizctl auth tokens create') and keep it with 'bizctl auth login --with-token'",
      "prod",
      "create one ('bizctl --profile prod auth tokens create') and keep it with 'bizctl --profile prod auth login --with-token'",
    ],
    [
      "a message's command",
      "Resume with: bizctl audit tail --follow --since 01J",
      "prod",
      "Resume with: bizctl --profile prod audit tail --follow --since 01J",
    ],
    [
      "a name a shell would split, quoted",
      "run 'bizctl auth login'",
      "my lab",
      "run 'bizctl --profile 'my lab' auth login'",
    ],
    ["no profile chosen: unchanged", "run 'bizctl auth login'", undefined, "run 'bizctl auth login'"],
    [
      "a command with its own --profile",
      "then 'bizctl --profile NAME auth login'",
      "prod",
      "then 'bizctl --profile NAME auth login'",
    ],
    ["commands on profiles", "see 'bizctl profile list'", "prod", "see 'bizctl profile list'"],
    ["commands on a data dir", "run 'bizctl server init' first", "prod", "run 'bizctl server init' first"],
    ["the program's help", "see 'bizctl --help'", "prod", "see 'bizctl --help'"],
  ])("%s", (_name, text, profile, want) => {
    expect(scoped(text, profile)).toBe(want);
  });

  it("takes the profile from --profile, --profile=, then BIZCTL_PROFILE", () => {
    expect(profileFlag(["node", "bizctl", "--profile", "a", "events", "list"])).toBe("a");
    expect(profileFlag(["node", "bizctl", "--profile=b", "events", "list"])).toBe("b");
    expect(profileFlag(["node", "bizctl", "events", "list"])).toBeUndefined();
    expect(chosenProfile("a", { BIZCTL_PROFILE: "c" })).toBe("a");
    expect(chosenProfile(undefined, { BIZCTL_PROFILE: "c" })).toBe("c");
    expect(chosenProfile(undefined, {})).toBeUndefined();
  });
});
