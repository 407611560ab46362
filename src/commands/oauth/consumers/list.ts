import type { Command } from "commander";
import type { Context } from "../../../cli/command-context.js";
import * as resources from "../../../contract/resources.js";
import { examples, withContext } from "../../verb-helpers.js";
import { CONSUMER_COLUMNS, CONSUMER_TYPE, describeConsumer } from "./consumer-resource.js";

async function list(ctx: Context): Promise<void> {
  ctx.requireCredential();
  const client = await ctx.client();
  const rows: Record<string, unknown>[] = [];
  for (let start = 1; ; ) {
    const { data } = await client.call(resources.listResources, {
      query: {
        resourcetypes: CONSUMER_TYPE,
        sortby: "name",
        startindex: start,
        count: resources.LIST_COUNT.max,
      },
    });
    rows.push(...data.Resources.map((r) => describeConsumer(r as Record<string, unknown>)));
    start += data.itemsPerPage;
    if (data.itemsPerPage === 0 || start > data.totalResults) break;
  }
  await ctx.printList(rows, CONSUMER_COLUMNS, "OAuth consumers");
}

export function register(group: Command, io: Context["io"]): void {
  group
    .command("list")
    .description("list the consumers (admin and support)")
    .addHelpText("after", examples("bizctl oauth consumers list", "bizctl oauth consumers list --json"))
    .action(withContext(io, list));
}
