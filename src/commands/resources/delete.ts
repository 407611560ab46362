import type { Command } from "commander";
import type { Context } from "../../cli/command-context.js";
import { refuseBeforeAsking } from "../../cli/permissions.js";
import * as resources from "../../contract/resources.js";
import { examples, tolerating, withContext } from "../verb-helpers.js";

const labelOf = (data: Record<string, unknown>) => String(data.userName ?? data.displayName ?? data.name ?? data.id);

async function deleteResources(ctx: Context, ids: string[], options: { ignoreNotFound?: boolean }): Promise<void> {
  ctx.requireCredential();
  const client = await ctx.client();
  // every id is looked up before anything is deleted: an unknown one stops the whole command
  const found = [];
  for (const id of ids) {
    const current = await tolerating(
      "not_found",
      options.ignoreNotFound,
      () => client.call(resources.getResource, { params: { resourceId: id } }),
      async () => {
        ctx.info(`No resource ${id}; nothing to delete.`);
        return undefined;
      },
    );
    if (current) found.push({ id, current, data: current.data as Record<string, unknown> });
  }
  if (found.length === 0) return;
  // with --yes nothing is asked: the server's answer is the check
  if (!ctx.globals.yes) {
    await refuseBeforeAsking(ctx, "resources:delete", {}, { about: "resources" });
  }
  await ctx.confirm(
    `Delete ${found.map((f) => `${String(f.data.resourceType)} ${labelOf(f.data)} (${f.id})`).join(", ")}?`,
  );
  for (const { id, current, data } of found) {
    await tolerating(
      "not_found",
      options.ignoreNotFound,
      () => client.call(resources.deleteResource, { params: { resourceId: id }, ifMatch: current.etag }),
      async () => undefined,
    );
    ctx.info(`Deleted ${String(data.resourceType)} ${labelOf(data)}.`);
  }
}

export function register(group: Command, io: Context["io"]): void {
  group
    .command("delete <ids...>")
    .description("delete resources (asks first; --yes without a terminal)")
    .option("--ignore-not-found", "a resource already gone is success")
    .addHelpText(
      "after",
      examples("bizctl resources delete <id> --yes", "bizctl resources delete <id> <id> --yes --ignore-not-found"),
    )
    .action(withContext(io, deleteResources));
}
