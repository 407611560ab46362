import { readFile } from "node:fs/promises";
import { apiErrorOf } from "../client/client.js";
import type { TransportResponse } from "../client/transport.js";
import type { Context } from "./command-context.js";
import { UsageError } from "./errors.js";
import { readStdin } from "./io.js";

/** `--data JSON|@FILE|-` of the raw-call commands (`api`, `oauth call`): the body, checked to be JSON. */
export async function readDataOption(ctx: Context, data: string | undefined): Promise<string | undefined> {
  if (data === undefined) return undefined;
  let text = data;
  if (data === "-") text = await readStdin(ctx.io);
  else if (data.startsWith("@")) {
    text = await readFile(data.slice(1), "utf8").catch((error: Error) => {
      throw new UsageError(`Cannot read ${data.slice(1)}: ${error.message}`);
    });
  }
  if (text.trim() === "") {
    throw new UsageError(
      data === "-"
        ? "--data - read nothing: stdin is empty; send the JSON body there."
        : `--data ${data} read nothing: the file is empty; put the JSON body in it.`,
    );
  }
  try {
    JSON.parse(text);
  } catch {
    throw new UsageError("--data is not valid JSON.");
  }
  return text;
}

/** Prints what a raw call answered; a non-2xx answer fails like a typed call does (same exit codes). */
export async function printRawResponse(ctx: Context, response: TransportResponse & { data: unknown }): Promise<void> {
  if (response.status >= 400) throw apiErrorOf(response, response.data);
  if (response.data !== undefined && response.data !== "") await ctx.print(response.data);
}
