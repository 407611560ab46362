/**
 * How `users search` folds a text (store/user-search-text.ts): case, accents and a few unmarked
 * letters ignored, the same for what is stored and what is typed; and a User's search rows, the
 * user name first, split at a value's end when long (PostgreSQL's btree entry limit).
 */
import { describe, expect, it } from "vitest";
import { foldForSearch, SEARCH_PATH, searchRows } from "../../src/server/store/user-search-text.js";

const value = (path: string, text: string, elem: number | null = null) => ({
  path,
  elem,
  kind: "s" as const,
  text_value: text.toLowerCase(),
  num_value: null,
});

describe("foldForSearch", () => {
  it.each([
    { text: "Müller", want: "muller" },
    { text: "Mu\u0308ller", want: "muller" },
    { text: "JOSÉ", want: "jose" },
    { text: "Łódź", want: "lodz" },
    { text: "Ørsted Straße", want: "orsted strasse" },
    { text: "Æsir Œuvre", want: "aesir oeuvre" },
    { text: "\uFB01ne \uFF21\uFF22", want: "fine ab" },
    { text: "İstanbul", want: "istanbul" },
    { text: "user-54321@example.com", want: "user-54321@example.com" },
    { text: "山田", want: "山田" },
  ])("folds '$text' to '$want'", ({ text, want }) => {
    expect(foldForSearch(text)).toBe(want);
  });
});

describe("searchRows", () => {
  it("puts the user name first, folds every searched value, and leaves the others out", () => {
    const rows = searchRows([
      value("emails.value", "jm@example.com", 0),
      value("name.familyname", "Müller"),
      value("username", "José"),
      value("title", "Chef"),
      { path: "active", elem: null, kind: "b" as const, text_value: "true", num_value: null },
    ]);
    expect(rows).toEqual([
      { path: SEARCH_PATH, elem: 0, kind: "s", text_value: "\njose\njm@example.com\nmuller\n", num_value: null },
    ]);
  });

  it("splits long values over rows at a value's end, each under the limit unless one value is longer", () => {
    const emails = Array.from({ length: 40 }, (_, i) => value("emails.value", `${"x".repeat(50)}${i}@example.com`, i));
    const rows = searchRows([value("username", "many"), ...emails]);
    expect(rows.length).toBeGreaterThan(1);
    expect(rows[0]?.text_value?.startsWith("\nmany\n")).toBe(true);
    for (const row of rows) expect(row.text_value?.length).toBeLessThanOrEqual(1000);
    const all = rows.map((row) => row.text_value).join("");
    for (const email of emails) expect(all).toContain(`\n${email.text_value}\n`);
    expect(rows.map((row) => row.elem)).toEqual(rows.map((_, i) => i));
  });
});
