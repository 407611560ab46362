import type { Command } from "commander";
import type { Context } from "../../cli/command-context.js";
import { examples, withContext } from "../verb-helpers.js";
import { approveTemporary } from "./exchanges.js";

async function authorize(ctx: Context, token: string): Promise<void> {
  const approval = await approveTemporary(ctx, token);
  ctx.info(
    approval.callback
      ? `Approved; the provider redirects to ${approval.callback.split("?")[0]} with the verifier.`
      : "Approved; give the verifier to the consumer (it is valid 10 minutes, once).",
  );
  await ctx.print(approval);
}

export function register(group: Command, io: Context["io"]): void {
  group
    .command("authorize <temporary-token>")
    .description("approve temporary credentials as the logged-in user (the second leg); prints the verifier")
    .addHelpText(
      "after",
      examples("bizctl oauth authorize <temporary-token>", "bizctl oauth authorize <temporary-token> --json"),
    )
    .action(withContext(io, authorize));
}
