import type { Context } from "./command-context.js";
import { terminalText } from "./terminal-text.js";

const clock = (seconds: number) => {
  const s = Math.max(0, Math.round(seconds));
  const hms = [Math.floor(s / 3600), Math.floor(s / 60) % 60, s % 60];
  return (hms[0] ? hms : hms.slice(1)).map((n, i) => (i === 0 ? String(n) : String(n).padStart(2, "0"))).join(":");
};

/**
 * A one-line progress bar on stderr, shown only on a terminal: the count, the rate, and with a
 * known total the time left. The total may be in other units than the count (the bytes of a file
 * read so far against its size, while the count is in records).
 */
export class Progress {
  private readonly active: boolean;
  private readonly started = Date.now();
  private lastDrawn = 0;

  constructor(
    private readonly ctx: Context,
    private readonly noun: string,
  ) {
    this.noun = terminalText(noun);
    this.active = Boolean(ctx.io.stderr.isTTY) && !ctx.globals.quiet;
  }

  /** `done` of `total` (count units); or `count` records with `fraction` of the work done. */
  update(done: number, total?: number, fraction?: number): void {
    if (!this.active) return;
    this.last = { done, total, measured: fraction !== undefined };
    const now = Date.now();
    // a redraw per record would cost more than the record on a fast import
    if (now - this.lastDrawn < 100 && (total === undefined || done < total)) return;
    this.draw(now, done, total, fraction);
  }

  private last?: { done: number; total?: number; measured: boolean };

  private draw(now: number, done: number, total?: number, fraction?: number): void {
    this.lastDrawn = now;
    const width = 30;
    const share = fraction ?? (total ? done / Math.max(total, 1) : undefined);
    const bar = share === undefined ? "" : "#".repeat(Math.round(Math.min(share, 1) * width)).padEnd(width, ".");
    const elapsed = (now - this.started) / 1000;
    const rate = elapsed > 0.5 ? done / elapsed : undefined;
    const parts = [`${bar ? `[${bar}] ` : ""}${done}${total ? `/${total}` : ""} ${this.noun}`];
    if (rate !== undefined) parts.push(`${Math.round(rate)}/s`);
    if (share !== undefined && share > 0 && share < 1 && elapsed > 0.5)
      parts.push(`${clock((elapsed / share) * (1 - share))} left`);
    this.ctx.io.stderr.write(`\r${parts.join("  ")}\x1b[K`);
  }

  /**
   * Ends the line. A finished run first draws its end (the last updates fall inside the redraw
   * interval, and a file's bytes read run ahead of what was sent), so the bar reaches its total;
   * a run that stopped leaves it where it stopped.
   */
  done(finished = true): void {
    if (!this.active) return;
    const last = this.last;
    if (finished && last) this.draw(Date.now(), last.done, last.total, last.measured ? 1 : undefined);
    this.ctx.io.stderr.write("\n");
  }
}
