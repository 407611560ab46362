import type { Command } from "commander";
import type { Context } from "../../cli/command-context.js";
import { examples, withContext } from "../verb-helpers.js";

async function token(ctx: Context): Promise<void> {
  ctx.printText(`${ctx.requireCredential().token}\n`);
}

export function register(group: Command, io: Context["io"]): void {
  group
    .command("token")
    .description("print the stored token (for scripts)")
    .addHelpText(
      "after",
      examples('curl -H "Authorization: Bearer $(bizctl auth token)" http://127.0.0.1:8080/auth/isLogged'),
    )
    .action(withContext(io, token));
}
