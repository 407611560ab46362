import type { Command } from "commander";
import type { Context } from "../../cli/context.js";
import { UsageError } from "../../cli/errors.js";
import { printRawResponse, readDataOption } from "../../cli/raw-call.js";
import { examples, withContext } from "../shared.js";

const METHODS = ["GET", "POST", "PUT", "DELETE", "PATCH", "HEAD", "OPTIONS"];

async function api(ctx: Context, method: string, path: string, options: { data?: string }): Promise<void> {
  const verb = method.toUpperCase();
  if (!METHODS.includes(verb)) throw new UsageError(`Unknown method '${method}'.`);
  if (!path.startsWith("/")) throw new UsageError("PATH must start with '/', e.g. /auth/isLogged.");
  const response = await (await ctx.client()).raw(verb, path, await readDataOption(ctx, options.data));
  await printRawResponse(ctx, response);
}

export function register(program: Command, io: Context["io"]): void {
  program
    .command("api <method> <path>")
    .description("call any API path with the profile's credentials")
    .option("--data <json>", "request body: JSON, @FILE, or - for stdin")
    .addHelpText(
      "after",
      examples(
        "bizctl api GET /auth/isLogged",
        "bizctl api POST /api/crm/v1/events --data @event.json",
        "echo '{}' | bizctl api PUT /Resources/ID --data -",
      ),
    )
    .action(withContext(io, api));
}
