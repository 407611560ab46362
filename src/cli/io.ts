import type { Readable, Writable } from "node:stream";
import { terminalText } from "./terminal-text.js";

/** The process edges a command may touch; tests hand in their own. */
export interface IO {
  stdin: Readable & { isTTY?: boolean };
  stdout: Writable & { isTTY?: boolean; columns?: number };
  stderr: Writable & { isTTY?: boolean };
  env: Record<string, string | undefined>;
}

export function processIO(): IO {
  return { stdin: process.stdin, stdout: process.stdout, stderr: process.stderr, env: process.env };
}

/**
 * One line of human text on stderr (a message, a warning, a trace or error line), with control
 * characters shown in their visible form. Done wherever stderr goes, not only on a terminal: a
 * log of it is read on one later, and a newline inside a value cannot forge a second line.
 */
export function writeLine(io: IO, text: string): void {
  io.stderr.write(`${terminalText(text)}\n`);
}

/** What each stdin held, read once: the process's, or a test's own for one run. */
const stdinText = new WeakMap<IO["stdin"], Promise<string>>();

/** All of stdin, read once however many values a command takes from it. */
export function readStdin(io: IO): Promise<string> {
  let text = stdinText.get(io.stdin);
  if (!text) {
    text = (async () => {
      const chunks: Buffer[] = [];
      for await (const chunk of io.stdin) chunks.push(Buffer.from(chunk as Buffer));
      return Buffer.concat(chunks).toString("utf8");
    })();
    stdinText.set(io.stdin, text);
  }
  return text;
}

/** The n-th line of stdin (0-based), without its line ending; undefined when stdin has fewer. */
export async function stdinLine(io: IO, index: number): Promise<string | undefined> {
  const lines = (await readStdin(io)).split(/\r?\n/);
  if (lines.at(-1) === "") lines.pop();
  return lines[index];
}
