import type { Command } from "commander";
import type { Context } from "../../cli/command-context.js";
import * as resources from "../../contract/resources.js";
import { examples, withContext } from "../verb-helpers.js";

export function register(group: Command, io: Context["io"]): void {
  group
    .command("get <id>")
    .description("show one resource")
    .addHelpText("after", examples("bizctl resources get <id>"))
    .action(
      withContext(io, async (ctx, id: string) => {
        ctx.requireCredential();
        const { data } = await (await ctx.client()).call(resources.getResource, { params: { resourceId: id } });
        await ctx.print(data);
      }),
    );
}
