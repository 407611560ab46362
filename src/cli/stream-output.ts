import { once } from "node:events";
import type { Context } from "./command-context.js";
import { shellWord } from "./hints.js";
import { OUTPUT_FORMATS } from "./output.js";

/** Whether printPages() writes each page as it comes (not a table, no --query, which need every row). */
export function streams(ctx: Context): boolean {
  return OUTPUT_FORMATS[ctx.format()].pages !== "whole" && ctx.globals.query === undefined;
}

/**
 * The command line that goes on after `cursor`: `command` (the verb and its own flags), the
 * output flags of this one (the format, the fields) and `--after`.
 */
export function resumeCommand(ctx: Context, command: string, cursor: string): string {
  const output = [`-o ${ctx.format()}`];
  if (ctx.globals.fields !== undefined) output.push(`--fields ${shellWord(ctx.globals.fields)}`);
  return `bizctl ${command.trim()} ${output.join(" ")} --after ${cursor}`;
}

/**
 * Prints a list that arrives page by page, writing each page as it comes so that memory stays
 * flat however long the list: NDJSON and YAML pages simply follow one another, a JSON array is
 * opened once and closed at the end (the same bytes as printing the whole array), and CSV writes
 * its header once, with `csvColumns` as the columns since the later pages are not known yet.
 * A table needs every row to size its columns, and a `--query` may look at the whole list
 * (`length(@)`, `[-1]`), so those two are printed at the end.
 */
export async function printPages(
  ctx: Context,
  pages: AsyncIterable<unknown[]>,
  options: { columns?: string[]; csvColumns: string[] },
): Promise<number> {
  const format = ctx.format();
  const { pages: framing, flatRows } = OUTPUT_FORMATS[format];
  let count = 0;
  if (!streams(ctx)) {
    const rows: unknown[] = [];
    for await (const page of pages) rows.push(...page);
    await ctx.print(rows, options.columns);
    return rows.length;
  }
  const stdout = ctx.io.stdout;
  const write = async (text: string) => {
    if (text && !stdout.write(text)) await once(stdout, "drain");
  };
  const renderPage = (rows: unknown[], first: boolean) =>
    ctx.render(rows, {
      format,
      // flat rows keep one set of columns on every page, named once by the header
      fields: flatRows ? (ctx.fields() ?? options.csvColumns) : ctx.fields(),
      columns: options.columns,
      header: framing !== "header-once" || first,
    });
  try {
    for await (const page of pages) {
      if (page.length === 0) continue;
      const text = await renderPage(page, count === 0);
      if (framing === "array") {
        // "[\n  a,\n  b\n]\n": the elements without the brackets, comma-joined across pages
        const elements = text.slice(2, -3);
        await write(count === 0 ? `[\n${elements}` : `,\n${elements}`);
      } else {
        await write(text);
      }
      count += page.length;
    }
  } finally {
    // an interrupted list still prints a whole JSON document, of the pages it had
    if (count > 0 && framing === "array") await write("\n]\n");
  }
  if (count === 0) await write(await renderPage([], true));
  return count;
}
