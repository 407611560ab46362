import type { Command } from "commander";
import type { Context } from "../../cli/command-context.js";
import { UsageError } from "../../cli/errors.js";
import { promptText } from "../../cli/prompts.js";
import { recordFromOptions } from "../../cli/record-input.js";
import { CUSTOM_TYPE_PATTERN, notATypeName } from "../../contract/resources.js";
import { createResource } from "../resource-calls.js";
import { collect, examples, withContext } from "../verb-helpers.js";

async function create(
  ctx: Context,
  options: { type?: string; set?: string[]; file?: string; ifNotExists?: boolean },
): Promise<void> {
  ctx.requireCredential();
  const record = await recordFromOptions(ctx.io, options);
  const type = options.type ?? (record.resourceType as string | undefined);
  if (!type) {
    if (!ctx.canPrompt())
      throw new UsageError(
        "The resource needs a type.",
        "pass --type TYPE (User, OAuthConsumer, or your own, e.g. Room)",
      );
    record.resourceType = await promptText(ctx.io, "Resource type (e.g. Room)");
  } else {
    record.resourceType = type;
  }
  // the server's schema would name the pattern; a person is better told what a type name is
  const typeName = String(record.resourceType);
  if (!new RegExp(CUSTOM_TYPE_PATTERN).test(typeName)) throw new UsageError(notATypeName(typeName));
  if (record.resourceType === "User" && record.userName === undefined) {
    if (!ctx.canPrompt())
      throw new UsageError("A user needs a user name.", "pass --set userName=NAME, or use 'bizctl users create'");
    record.userName = await promptText(ctx.io, "User name");
  }
  await ctx.print((await createResource(ctx, record, options.ifNotExists)).data);
}

export function register(group: Command, io: Context["io"]): void {
  group
    .command("create")
    .description("create a resource of a type")
    .option("--type <type>", "User, OAuthConsumer, or a custom type name (e.g. Room)")
    .option("--set <key=value>", "an attribute (repeatable; dotted keys; JSON values allowed)", collect)
    .option("--file <file>", "the resource as JSON or YAML ('-' for stdin)")
    .option("--if-not-exists", "a User of that userName already there is success: it is printed, unchanged")
    .addHelpText(
      "after",
      examples(
        'bizctl resources create --type Room --set displayName="Board room" --set floor=3 --set capacity=12',
        "bizctl resources create --type Room --file room.yaml",
      ),
    )
    .action(withContext(io, create));
}
