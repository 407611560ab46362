import type { ResourceValuesTable } from "./schema.js";

type ValueRow = Omit<ResourceValuesTable, "resource_id">;

/** The values a free-text search of Users reads, as resource_values names them (lower-cased paths). */
export const SEARCHED_PATHS = [
  "username",
  "name.givenname",
  "name.familyname",
  "name.formatted",
  "displayname",
  "emails.value",
  "externalid",
] as const;

/**
 * The path of a User's search rows: its searched values folded, one after the other. No
 * attribute can have it (an attribute name holds no `#`), so no filter or sort reads it.
 */
export const SEARCH_PATH = "#search";

/** Between two values of a search row, and around them: no user name holds it (USER_NAME_PATTERN). */
export const SEPARATOR = "\n";

/**
 * A search row's longest text, in characters, unless a single value is longer: PostgreSQL's btree
 * indexes over the values take an entry of at most 2,704 bytes, and a User may have 100 e-mails.
 */
const ROW_CHARACTERS = 1000;

/** Letters that hold no accent to strip but are typed as plain ones (`Lodz` for `Łódź`). */
// ß æ œ ø ł đ ð þ ı, escaped: the bundles are ASCII
const PLAIN: Record<string, string> = {
  "\u00df": "ss",
  "\u00e6": "ae",
  "\u0153": "oe",
  "\u00f8": "o",
  "\u0142": "l",
  "\u0111": "d",
  "\u00f0": "d",
  "\u00fe": "th",
  "\u0131": "i",
};
const UNMARKED = /[\u00df\u00e6\u0153\u00f8\u0142\u0111\u00f0\u00fe\u0131]/g;

/**
 * A text as a search compares it: lower-cased, compatibility-decomposed (NFKD: `ﬁ` is `fi`,
 * full-width letters are ASCII), without its combining marks (`Müller` is `muller`, `José` is
 * `jose`), and a few letters that are not composed spelt plainly. The stored rows and the text
 * looked for go through this one function, so that both stores compare the same strings.
 */
export function foldForSearch(text: string): string {
  return text
    .toLowerCase()
    .normalize("NFKD")
    .replace(/\p{M}/gu, "")
    .replace(UNMARKED, (letter) => PLAIN[letter] ?? letter);
}

/**
 * A User's search rows, from its value rows: its searched values folded, each after a separator
 * and the last followed by one, the user name first (so that `\nname\n` starts row 0 for an exact
 * user name, `\ntext` marks a value that starts with it). One row, unless the values are long.
 */
export function searchRows(values: readonly ValueRow[]): ValueRow[] {
  const searched = values.filter(
    (row) => row.kind === "s" && row.text_value !== null && (SEARCHED_PATHS as readonly string[]).includes(row.path),
  );
  const userName = searched.find((row) => row.path === "username")?.text_value ?? "";
  const rest = searched.filter((row) => row.path !== "username").map((row) => foldForSearch(row.text_value ?? ""));
  const texts: string[] = [];
  let text = SEPARATOR + foldForSearch(userName) + SEPARATOR;
  for (const value of rest) {
    if (text.length > SEPARATOR.length && text.length + value.length > ROW_CHARACTERS) {
      texts.push(text);
      text = SEPARATOR;
    }
    text += value + SEPARATOR;
  }
  texts.push(text);
  return texts.map((text_value, elem) => ({ path: SEARCH_PATH, elem, kind: "s", text_value, num_value: null }));
}
