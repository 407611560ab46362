import { readFile } from "node:fs/promises";
import type { Command } from "commander";
import type { Context } from "../../cli/context.js";
import { UsageError } from "../../cli/errors.js";
import { readStdin } from "../../cli/io.js";
import { ApiError } from "../../client/errors.js";
import { examples, withContext } from "../shared.js";

const METHODS = ["GET", "POST", "PUT", "DELETE", "PATCH", "HEAD", "OPTIONS"];

async function bodyFrom(ctx: Context, data: string | undefined): Promise<string | undefined> {
  if (data === undefined) return undefined;
  const text =
    data === "-" ? await readStdin(ctx.io) : data.startsWith("@") ? await readFile(data.slice(1), "utf8") : data;
  try {
    JSON.parse(text);
  } catch {
    throw new UsageError("--data is not valid JSON.");
  }
  return text;
}

async function api(ctx: Context, method: string, path: string, options: { data?: string }): Promise<void> {
  const verb = method.toUpperCase();
  if (!METHODS.includes(verb)) throw new UsageError(`Unknown method '${method}'.`);
  if (!path.startsWith("/")) throw new UsageError("PATH must start with '/', e.g. /auth/isLogged.");
  const response = await (await ctx.client()).raw(verb, path, await bodyFrom(ctx, options.data));
  if (response.status >= 400) {
    const problem = response.data as { code?: string };
    throw new ApiError(response.status, {
      type: "about:blank",
      title: `HTTP ${response.status}`,
      status: response.status,
      detail: `HTTP ${response.status}`,
      code: "http_error",
      ...(typeof problem === "object" ? problem : {}),
    });
  }
  if (response.data !== undefined) await ctx.print(response.data);
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
