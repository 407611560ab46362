import type { Command } from "commander";
import type { Context } from "../../cli/command-context.js";
import * as resources from "../../contract/resources.js";
import { examples, tolerating, withContext } from "../verb-helpers.js";
import { resolveUser } from "./resolve.js";

export function register(group: Command, io: Context["io"]): void {
  group
    .command("delete <users...>")
    .description("delete users by id, user name or e-mail (asks first; --yes without a terminal)")
    .option("--ignore-not-found", "a user already gone is success")
    .addHelpText("after", examples("bizctl users delete <user> --yes"))
    .action(
      withContext(io, async (ctx, references: string[], options: { ignoreNotFound?: boolean }) => {
        ctx.requireCredential();
        const client = await ctx.client();
        const users = [];
        for (const reference of references) {
          const user = await tolerating(
            "not_found",
            options.ignoreNotFound,
            () => resolveUser(ctx, reference),
            async () => {
              ctx.info(`No user '${reference}'; nothing to delete.`);
              return undefined;
            },
          );
          if (user) users.push(user);
        }
        if (users.length === 0) return;
        await ctx.confirm(`Delete ${users.map((u) => `${u.userName} (${u.id})`).join(", ")}?`);
        for (const user of users) {
          const current = await client.call(resources.getResource, { params: { resourceId: user.id } });
          await client.call(resources.deleteResource, { params: { resourceId: user.id }, ifMatch: current.etag });
          ctx.info(`Deleted ${user.userName}.`);
        }
      }),
    );
}
