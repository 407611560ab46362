import type { Command } from "commander";
import type { Context } from "../../../cli/command-context.js";
import { examples, withContext } from "../../verb-helpers.js";
import { describeConsumer, getConsumer } from "./consumer-resource.js";

export function register(group: Command, io: Context["io"]): void {
  group
    .command("get <id>")
    .description("show one consumer (its secret is never shown again)")
    .addHelpText("after", examples("bizctl oauth consumers get <consumer-id>"))
    .action(
      withContext(io, async (ctx, id: string) => {
        ctx.requireCredential();
        const { data } = await getConsumer(ctx, id);
        await ctx.print(describeConsumer(data as Record<string, unknown>));
      }),
    );
}
