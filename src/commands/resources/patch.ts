import type { Command } from "commander";
import type { Context } from "../../cli/command-context.js";
import { UsageError } from "../../cli/errors.js";
import { type PatchOperation, parsePatchOperation } from "../../cli/patch-operations.js";
import { readRecordFile } from "../../cli/record-input.js";
import { patchResource } from "../../contract/resource-patch.js";
import { SCIM_URN } from "../../contract/scim.js";
import { collect, examples, withContext } from "../verb-helpers.js";

interface Options {
  op?: string[];
  file?: string;
  ifMatch?: string;
}

/** The operations of `--file`: a PatchOp message, as a SCIM client sends it. */
async function fileOperations(ctx: Context, file: string): Promise<PatchOperation[]> {
  const message = await readRecordFile(ctx.io, file);
  if (!Array.isArray(message.Operations)) {
    throw new UsageError(`${file} must hold a PatchOp message: {"schemas": [...], "Operations": [...]}.`);
  }
  return message.Operations as PatchOperation[];
}

async function patch(ctx: Context, id: string, options: Options): Promise<void> {
  ctx.requireCredential();
  ctx.checkFieldsBeforeWrite();
  const operations = [
    ...(options.file ? await fileOperations(ctx, options.file) : []),
    ...(options.op ?? []).map(parsePatchOperation),
  ];
  if (operations.length === 0) throw new UsageError("Nothing to change.", "pass --op OP:PATH=VALUE or --file F");
  const client = await ctx.client();
  const { data } = await client.call(patchResource, {
    params: { resourceId: id },
    body: { schemas: [SCIM_URN.patchOp], Operations: operations },
    ...(options.ifMatch && { ifMatch: options.ifMatch }),
  });
  ctx.info(`Patched ${String(data.resourceType)} ${data.id}.`);
  await ctx.print(data);
}

export function register(group: Command, io: Context["io"]): void {
  group
    .command("patch <id>")
    .description("change a resource with SCIM PATCH operations (add, replace, remove), under the rules of update")
    .option("--op <op>", "an operation OP:PATH=VALUE, or remove:PATH (repeatable; JSON values)", collect)
    .option("--file <file>", "a PatchOp message as JSON or YAML ('-' for stdin); its operations go first")
    .option("--if-match <etag>", "apply only to this version of the resource (its ETag)")
    .addHelpText(
      "after",
      examples(
        "bizctl resources patch <id> --op 'replace:active=false'",
        "bizctl resources patch <id> --op 'add:emails[type eq \"work\"].value=ada@example.com' --op remove:nickName",
        "bizctl resources patch <id> --file patch.json",
      ),
    )
    .action(withContext(io, patch));
}
