/**
 * What a list table shows on a terminal, to fit its width by choosing rather than cutting
 * (issue 47): columns empty in every row go, a moment reads as a relative time as gh shows it,
 * and the columns of least importance (the rightmost that may give way) go before any is cut short.
 */

/**
 * Columns that say when something happened or lapses (an audit record's `time`, `created`,
 * `lastUsedAt`, `expires`…), not a date of the data itself such as an event's `startsAt`.
 */
const MOMENT = /(^|\.)(time|created|lastModified|lastUsed|expires)$|^(created|expires|lastUsed|issued)At$/;
const ISO_TIME = /^\d{4}-\d\d-\d\dT\d\d:\d\d(:\d\d(\.\d+)?)?(Z|[+-]\d\d:?\d\d)$/;

const UNITS: [Intl.RelativeTimeFormatUnit, number][] = [
  ["second", 60],
  ["minute", 60],
  ["hour", 24],
  ["day", 30],
];
// made on first use: building it loads ICU's data (about 10 ms), which a command that prints no
// table on a terminal (`--json`, a pipe) should not pay at start-up
let relative: Intl.RelativeTimeFormat | undefined;

/**
 * `3 minutes ago`, `in 2 days`, `yesterday`; from 30 days away, the date alone (`2026-10-02`),
 * which says more than "2 months ago". Anything that is no ISO time is left as it is.
 */
export function relativeTime(text: string, now = Date.now()): string {
  if (!ISO_TIME.test(text)) return text;
  const at = Date.parse(text);
  if (Number.isNaN(at)) return text;
  let amount = (at - now) / 1000;
  for (const [unit, next] of UNITS) {
    if (Math.abs(amount) < next) {
      relative ??= new Intl.RelativeTimeFormat("en", { numeric: "auto" });
      return relative.format(Math.trunc(amount), unit);
    }
    amount /= next;
  }
  return text.slice(0, 10);
}

/**
 * A time as a person reads it on a terminal: a moment's relative, any other (an event's start)
 * without the zero seconds (`2027-04-01T10:00Z`, the same instant); every other cell unchanged.
 */
export function shownOnTerminal(column: string, value: unknown): unknown {
  if (typeof value !== "string" || !ISO_TIME.test(value)) return value;
  return MOMENT.test(column) ? relativeTime(value) : value.replace(/:00(\.0+)?(?=Z|[+-])/, "");
}

/** Whether a column holds times, which are shown whole or not at all: "2027-04-01T1…" says little. */
export const isTimes = (cells: string[]): boolean =>
  cells.some((c) => c !== "") && cells.every((c) => c === "" || ISO_TIME.test(c) || RELATIVE.test(c));
const RELATIVE = /^(in \d+ \w+|\d+ \w+ ago|now|yesterday|tomorrow|\d{4}-\d\d-\d\d)$/;

/** What a column that gives way keeps at least before a column of less importance goes instead. */
const KEPT = 10;

export interface ColumnFit {
  natural: number;
  empty: boolean;
  /** an identifier: always shown, never cut */
  fixed: boolean;
  /** shown whole or left out, never cut (times) */
  whole: boolean;
}

/**
 * The columns to show, in order: none empty in every row, and while the row cannot fit the
 * terminal with each column that may give way kept at `KEPT` characters, the rightmost such
 * column goes (columns come most important first). Identifier columns always stay.
 */
export function chooseColumns(columns: ColumnFit[], width: number | undefined, gap: number): number[] {
  let kept = columns.map((_, i) => i).filter((i) => !columns[i]?.empty);
  if (!width || width <= 0) return kept;
  const least = (i: number) => {
    const column = columns[i]!;
    return column.fixed || column.whole ? column.natural : Math.min(column.natural, KEPT);
  };
  const needed = () => kept.reduce((sum, i) => sum + least(i), 0) + gap * (kept.length - 1);
  while (needed() > width - 1) {
    const dropped = kept.findLast((i) => !columns[i]?.fixed);
    if (dropped === undefined) break;
    kept = kept.filter((i) => i !== dropped);
  }
  return kept;
}
