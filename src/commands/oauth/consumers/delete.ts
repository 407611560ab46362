import type { Command } from "commander";
import type { Context } from "../../../cli/command-context.js";
import { refuseBeforeAsking } from "../../../cli/permissions.js";
import * as resources from "../../../contract/resources.js";
import { examples, withContext } from "../../verb-helpers.js";
import { getConsumer } from "./consumer-resource.js";

export function register(group: Command, io: Context["io"]): void {
  group
    .command("delete <id>")
    .description("delete a consumer and revoke every token issued to it (asks first; --yes without a terminal)")
    .addHelpText("after", examples("bizctl oauth consumers delete <consumer-id> --yes"))
    .action(
      withContext(io, async (ctx, id: string) => {
        ctx.requireCredential();
        const current = await getConsumer(ctx, id);
        const name = String((current.data as Record<string, unknown>).name ?? id);
        if (!ctx.globals.yes) {
          await refuseBeforeAsking(ctx, "oauth-consumers:delete", {}, { about: "OAuth consumers" });
        }
        await ctx.confirm(`Delete OAuth consumer ${name} (${id}) and revoke its tokens?`);
        const client = await ctx.client();
        await client.call(resources.deleteResource, { params: { resourceId: id }, ifMatch: current.etag });
        ctx.info(`Deleted OAuth consumer ${name}; its tokens no longer work.`);
      }),
    );
}
