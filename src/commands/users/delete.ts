import type { Command } from "commander";
import type { Context } from "../../cli/command-context.js";
import { refuseBeforeAsking } from "../../cli/permissions.js";
import * as resources from "../../contract/resources.js";
import { examples, namesFrom, tolerating, withContext } from "../verb-helpers.js";
import { actOnFilter, checkSelection, DELETE, type FilterOptions } from "./by-filter.js";
import { resolveUser } from "./resolve.js";

export function register(group: Command, io: Context["io"]): void {
  group
    .command("delete [users...]")
    .description(
      "delete users by id, user name or e-mail ('-': read from stdin, one a line), or every user --filter selects, in bulk (asks first; --yes without a terminal)",
    )
    .option("--ignore-not-found", "a user already gone is success")
    .option("--filter <expr>", "delete every user this SCIM filter selects, through POST /Bulk")
    .option("--dry-run", "with --filter: print how many users it selects and the first ids; delete nothing")
    .addHelpText(
      "after",
      examples(
        "bizctl users delete <user> --yes",
        "bizctl users delete --filter 'userName sw \"ci-\"' --dry-run",
        "bizctl users delete --filter 'externalId pr and department eq \"Temp\"' --yes",
        "bizctl users list --filter 'userName sw \"ci-\"' --query '[].id' -o table | bizctl users delete - --yes",
      ),
    )
    .action(
      withContext(io, async (ctx, references: string[], options: { ignoreNotFound?: boolean } & FilterOptions) => {
        if (checkSelection(references, options, "delete")) {
          return actOnFilter(ctx, options.filter as string, options, DELETE);
        }
        ctx.requireCredential();
        const client = await ctx.client();
        const users = [];
        for (const reference of await namesFrom(ctx, references, "users")) {
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
        // with --yes nothing is asked: the server's answer is the check
        if (!ctx.globals.yes) {
          await refuseBeforeAsking(ctx, "users:delete", {}, { about: "users" });
        }
        await ctx.confirm(`Delete ${users.map((u) => `${u.userName} (${u.id})`).join(", ")}?`);
        for (const user of users) {
          const current = await client.call(resources.getResource, { params: { resourceId: user.id } });
          await client.call(resources.deleteResource, { params: { resourceId: user.id }, ifMatch: current.etag });
          ctx.info(`Deleted ${user.userName}.`);
        }
      }),
    );
}
