import type { Command } from "commander";
import type { Context } from "../../cli/command-context.js";
import * as groups from "../../contract/scim-groups.js";
import { examples, withContext } from "../verb-helpers.js";
import { GROUP_COLUMNS, groupRecord } from "./shared.js";

const PAGE = 500;

export function register(group: Command, io: Context["io"]): void {
  group
    .command("list")
    .description("list groups by display name, with the roles each grants")
    .addHelpText("after", examples("bizctl groups list", "bizctl groups list --json"))
    .action(
      withContext(io, async (ctx) => {
        ctx.requireCredential();
        const client = await ctx.client();
        const rows = [];
        for (let start = 1; ; start += PAGE) {
          const { data } = await client.call(groups.listGroups, {
            query: { startindex: start, count: PAGE, excludedattributes: "members" },
          });
          rows.push(...data.Resources.map((one) => groupRecord(one as Record<string, unknown>)));
          if (data.Resources.length < PAGE || rows.length >= data.totalResults) break;
        }
        await ctx.printList(rows, GROUP_COLUMNS, "groups");
      }),
    );
}
