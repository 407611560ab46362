import { Help } from "commander";

/** Commander's width when the stream is not a terminal. */
const PIPED_WIDTH = 80;

/** The width help is wrapped to on `stream`: the terminal's, else Commander's default. */
export function helpWidth(stream: { isTTY?: boolean; columns?: number }): number {
  return stream.isTTY && stream.columns ? stream.columns : PIPED_WIDTH;
}

/**
 * Help as Commander writes it, its prose paragraphs (lines that start at the margin, written
 * wrapped in the source) joined and wrapped again to `width`, as Commander wraps its own
 * descriptions. Indented lines (options, commands, examples, lists) are left as they are.
 */
export function reflowHelp(text: string, width: number): string {
  const help = new Help();
  const out: string[] = [];
  let paragraph: string[] = [];
  const flush = () => {
    if (paragraph.length > 1 || (paragraph[0] ?? "").length > width) {
      out.push(help.boxWrap(paragraph.join(" "), width));
    } else out.push(...paragraph);
    paragraph = [];
  };
  for (const line of text.split("\n")) {
    if (line !== "" && !/^\s/.test(line)) {
      paragraph.push(line.trimEnd());
      continue;
    }
    flush();
    out.push(line);
  }
  flush();
  return out.join("\n");
}
