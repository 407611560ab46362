import type { Command } from "commander";
import type { Context } from "../../cli/command-context.js";
import * as accessToken from "./access-token.js";
import * as authorize from "./authorize.js";
import * as call from "./call.js";
import * as consumers from "./consumers/index.js";
import * as flow from "./flow.js";
import * as requestToken from "./request-token.js";
import * as tokens from "./tokens/index.js";
import * as whoami from "./whoami.js";

export function register(program: Command, io: Context["io"]): void {
  const group = program
    .command("oauth")
    .description("OAuth 1.0a: consumers, the three legs, signed calls, granted tokens");
  for (const verb of [consumers, requestToken, authorize, accessToken, flow, whoami, call, tokens]) {
    verb.register(group, io);
  }
}
