/**
 * CSV cells a spreadsheet cannot run ("CSV Injection", OWASP).
 *
 * Anyone can put text in a record: a failed login's User-Agent lands in the audit trail without an
 * account. A spreadsheet opening our CSV reads a cell that starts with `=`, `+`, `-`, `@`, a tab
 * or a CR as a formula (`=HYPERLINK(…)`, DDE). Such a cell is written with a `'` in front, which
 * spreadsheets take as "text" and do not show. A cell that starts with `'` itself gets one more,
 * so that the rule is a bijection: the readers of our CSV remove exactly one leading `'`, and an
 * export imported back is the same data.
 */

const FORMULA_TRIGGERS = new Set(["=", "+", "-", "@", "\t", "\r"]);
const TEXT_MARK = "'";

/** The cell as written: a `'` in front of a formula trigger or of a `'`. */
export function neutraliseCell(text: string): string {
  const first = text.charAt(0);
  return FORMULA_TRIGGERS.has(first) || first === TEXT_MARK ? `${TEXT_MARK}${text}` : text;
}

/** The inverse of neutraliseCell, for a cell read from a CSV file: one leading `'` removed. */
export function restoreCell(text: string): string {
  return text.startsWith(TEXT_MARK) ? text.slice(TEXT_MARK.length) : text;
}
