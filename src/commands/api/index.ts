import { STATUS_CODES } from "node:http";
import type { Command } from "commander";
import type { Context } from "../../cli/command-context.js";
import { UsageError } from "../../cli/errors.js";
import { printRawResponse, readDataOption } from "../../cli/raw-call.js";
import { terminalText } from "../../cli/terminal-text.js";
import type { TransportResponse } from "../../client/transport.js";
import { collect, examples, withContext } from "../verb-helpers.js";

const METHODS = ["GET", "POST", "PUT", "DELETE", "PATCH", "HEAD", "OPTIONS"];

interface Options {
  data?: string;
  include?: boolean;
  header?: string[];
  paginate?: boolean;
}

type Response = TransportResponse & { data: unknown };

/** `-H 'Name: value'` as gh takes it; a header without a colon or name is refused. */
function headersOf(lines: string[]): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const line of lines) {
    const colon = line.indexOf(":");
    const name = line.slice(0, colon).trim();
    if (colon < 1 || !/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(name)) {
      throw new UsageError(`-H '${line}' is not a header; write it as 'Name: value'.`);
    }
    headers[name.toLowerCase()] = line.slice(colon + 1).trim();
  }
  return headers;
}

/** The target of the `Link` header's rel="next" (RFC 8288), as a path on the same server. */
export function nextPage(link: string | undefined): string | undefined {
  for (const part of link?.split(/,(?=\s*<)/) ?? []) {
    const match = /^\s*<([^>]*)>(.*)$/.exec(part);
    if (!match || !/;\s*rel="?([^";]*\s)?next(\s[^";]*)?"?\s*(;|$)/i.test(match[2] ?? "")) continue;
    const target = new URL(match[1] as string, "http://server.invalid");
    return `${target.pathname}${target.search}`;
  }
  return undefined;
}

/**
 * `--paginate`: pages that are JSON arrays become one array; pages that are objects keep their
 * array members concatenated by name (`data`, `Resources`) and the other members of the last page.
 */
function mergePages(pages: unknown[]): unknown {
  if (pages.every(Array.isArray)) return pages.flat();
  const merged: Record<string, unknown> = {};
  for (const page of pages as Record<string, unknown>[]) {
    for (const [key, value] of Object.entries(page)) {
      const before = merged[key];
      merged[key] = Array.isArray(value) && Array.isArray(before) ? [...before, ...value] : value;
    }
  }
  return merged;
}

/** `-i`: the status line and the headers, as gh api -i prints them, before the body. */
function printHead(ctx: Context, response: Response): void {
  const lines = [
    `HTTP/1.1 ${response.status} ${STATUS_CODES[response.status] ?? ""}`.trimEnd(),
    ...Object.entries(response.headers).map(([name, value]) => `${name}: ${value}`),
    "",
  ];
  const text = `${lines.join("\n")}\n`;
  ctx.io.stdout.write(ctx.io.stdout.isTTY ? terminalText(text, { newlines: true }) : text);
}

async function api(ctx: Context, method: string, path: string, options: Options): Promise<void> {
  const verb = method.toUpperCase();
  if (!METHODS.includes(verb)) throw new UsageError(`Unknown method '${method}'.`);
  if (!path.startsWith("/")) throw new UsageError("PATH must start with '/', e.g. /auth/isLogged.");
  if (options.paginate && verb !== "GET") throw new UsageError("--paginate follows the pages of a GET only.");
  const headers = headersOf(options.header ?? []);
  const body = await readDataOption(ctx, options.data);
  const client = await ctx.client();
  const responses: Response[] = [];
  const seen = new Set<string>();
  for (let next: string | undefined = path; next !== undefined && !seen.has(next); ) {
    seen.add(next);
    const response = await client.raw(verb, next, body, headers);
    responses.push(response);
    if (options.include) printHead(ctx, response);
    if (!options.paginate || response.status >= 400) break;
    next = nextPage(response.headers.link);
  }
  const last = responses.at(-1) as Response;
  if (responses.length === 1 || last.status >= 400) return printRawResponse(ctx, last);
  await printRawResponse(ctx, { ...last, data: mergePages(responses.map((r) => r.data)) });
}

export function register(program: Command, io: Context["io"]): void {
  program
    .command("api <method> <path>")
    .description("call any API path with the profile's credentials")
    .option("--data <json>", "request body: JSON, @FILE, or - for stdin")
    .option("-H, --header <line>", "request header 'Name: value' (repeatable)", collect)
    .option("-i, --include", "print the status line and response headers before the body")
    .option("--paginate", 'follow the Link rel="next" pages and print them as one result')
    .addHelpText(
      "after",
      examples(
        "bizctl api GET /auth/isLogged",
        "bizctl api POST /api/crm/v1/events --data @event.json",
        "echo '{}' | bizctl api PUT /Resources/<id> --data -",
        "bizctl api -i GET /health",
        "bizctl api GET '/api/crm/v1/events?pagesize=100' --paginate --query 'data[].code'",
        "bizctl api GET /Resources -H 'Accept: application/scim+json'",
      ),
    )
    .action(withContext(io, api));
}
