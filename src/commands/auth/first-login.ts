import type { Command } from "commander";
import type { Context } from "../../cli/command-context.js";
import * as auth from "../../contract/auth.js";
import { examples, withContext } from "../verb-helpers.js";

async function firstLogin(ctx: Context, employeeId: string | undefined): Promise<void> {
  ctx.requireCredential();
  const client = await ctx.client();
  const { data } = employeeId
    ? await client.call(auth.isFirstLoginOf, { params: { employeeId } })
    : await client.call(auth.isFirstLogin);
  await ctx.print(data);
}

export function register(group: Command, io: Context["io"]): void {
  group
    .command("first-login [employeeId]")
    .description("whether you (or an employee) must still replace a temporary password")
    .addHelpText("after", examples("bizctl auth first-login", "bizctl auth first-login <employee-id>"))
    .action(withContext(io, firstLogin));
}
