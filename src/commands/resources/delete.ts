import type { Command } from "commander";
import type { Context } from "../../cli/context.js";
import * as resources from "../../contract/resources.js";
import { examples, withContext } from "../shared.js";

export function register(group: Command, io: Context["io"]): void {
  group
    .command("delete <id>")
    .description("delete a resource (asks first; --yes without a terminal)")
    .addHelpText("after", examples("bizctl resources delete 2819c223 --yes"))
    .action(
      withContext(io, async (ctx, id: string) => {
        ctx.requireCredential();
        const client = await ctx.client();
        const current = await client.call(resources.getResource, { params: { resourceId: id } });
        const data = current.data as Record<string, unknown>;
        const label = String(data.userName ?? data.displayName ?? data.name ?? data.id);
        await ctx.confirm(`Delete ${String(data.resourceType)} ${label} (${id})?`);
        await client.call(resources.deleteResource, { params: { resourceId: id }, ifMatch: current.etag });
        ctx.info(`Deleted ${String(data.resourceType)} ${label}.`);
      }),
    );
}
