import type { Command } from "commander";
import type { Context } from "../../../cli/command-context.js";
import * as list from "./list.js";
import * as revoke from "./revoke.js";

export function register(group: Command, io: Context["io"]): void {
  const tokens = group
    .command("tokens")
    .description(
      "connected applications: the OAuth grants (token credentials) users gave; yours, or everyone's (admin)",
    );
  for (const verb of [list, revoke]) verb.register(tokens, io);
}
