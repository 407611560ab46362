import type { Static } from "@sinclair/typebox";
import type { Command } from "commander";
import type { Context } from "../../cli/command-context.js";
import { UsageError } from "../../cli/errors.js";
import * as access from "../../contract/access.js";
import { isOperationId, OPERATION_IDS } from "../../contract/policy/index.js";
import { resolveUser } from "../user-reference.js";
import { examples, forPerson, withContext } from "../verb-helpers.js";

type Explanation = Static<typeof access.AccessExplanation>;

const sourceWords = (source: string) => (source === "direct" ? "held directly" : `from the group ${source}`);

/** The explanation as a person reads it: the answer, where each role comes from, then the policy's facts. */
export function explanationStory(found: Explanation): string {
  const on = found.target ? ` on ${found.target.userName}` : "";
  const by = found.token ? ` with the API token ${found.token.name} (${found.token.id})` : "";
  const lines = [`${found.userName} ${found.allowed ? "may" : "may not"} ${found.operation}${on}${by}.`, ""];
  lines.push(
    found.roles.length === 0
      ? "Roles: none."
      : `Roles: ${found.roles.map((held) => `${held.role} (${sourceWords(held.source)})`).join(", ")}.`,
  );
  if (found.token) lines.push(`Token scopes: ${found.token.scopes.join(", ") || "none"}.`);
  lines.push("", "Why:");
  for (const [i, reason] of found.reasons.entries()) lines.push(`${i + 1}. ${reason.rule}: ${reason.detail}`);
  if (found.refusal) lines.push("", `The server would answer: ${found.refusal.message}`);
  return `${lines.join("\n")}\n`;
}

export function register(group: Command, io: Context["io"]): void {
  group
    .command("explain <user> <operation>")
    .description(
      "whether a user may do a policy operation (events:write, users:set-password, ...), and why (admin and support)",
    )
    .option("--token <id>", "as the user's API token of this id: its scopes count (admin)")
    .option("--target <user>", "aimed at this user: the least privilege rule counts its roles")
    .addHelpText(
      "after",
      examples(
        "bizctl access explain <user> events:write",
        "bizctl access explain <user> users:set-password --target <user> --json",
      ),
    )
    .action(
      withContext(
        io,
        async (ctx, reference: string, operation: string, options: { token?: string; target?: string }) => {
          // the policy's own list, as the server's 400 names it: a usage error before any request
          if (!isOperationId(operation)) {
            throw new UsageError(`Unknown operation '${operation}'. Valid operations: ${OPERATION_IDS.join(", ")}.`);
          }
          ctx.requireCredential();
          const user = await resolveUser(ctx, reference);
          const target = options.target === undefined ? undefined : await resolveUser(ctx, options.target);
          const { data } = await (await ctx.client()).call(access.explainAccess, {
            params: { id: user.id },
            query: {
              operation,
              ...(options.token !== undefined && { token: options.token }),
              ...(target && { target: target.id }),
            },
          });
          if (forPerson(ctx)) ctx.printText(explanationStory(data));
          else await ctx.print(data);
        },
      ),
    );
}
