import type { Context } from "./context.js";
import { terminalText } from "./terminal-text.js";

/** A one-line progress count on stderr, shown only on a terminal. */
export class Progress {
  private readonly active: boolean;

  constructor(
    private readonly ctx: Context,
    private readonly noun: string,
  ) {
    this.noun = terminalText(noun);
    this.active = Boolean(ctx.io.stderr.isTTY) && !ctx.globals.quiet;
  }

  update(done: number, total?: number): void {
    if (!this.active) return;
    const width = 30;
    const bar = total ? "#".repeat(Math.round((done / Math.max(total, 1)) * width)).padEnd(width, ".") : "";
    this.ctx.io.stderr.write(`\r${bar ? `[${bar}] ` : ""}${done}${total ? `/${total}` : ""} ${this.noun}`);
  }

  done(): void {
    if (this.active) this.ctx.io.stderr.write("\n");
  }
}
