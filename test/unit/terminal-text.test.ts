/**
 * The terminal sanitizer: which characters a terminal would act on, and the visible form each
 * one takes instead (see src/cli/terminal-text.ts).
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { terminalJson, terminalText, visibleForm } from "../../src/cli/terminal-text.js";

/** Any character a terminal acts on: C0, DEL, C1, and the bidi embedding/override/isolate controls. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: finding control characters is the point
const RAW_CONTROL = /[\u0000-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/;

describe("terminalText", () => {
  it.each([
    // [what, input, options, shown]
    ["plain text is unchanged", "Kick-off 2027", {}, "Kick-off 2027"],
    ["letters beyond ASCII, CJK and emoji are unchanged", "Café 会議 🎉 naïve", {}, "Café 会議 🎉 naïve"],
    ["a no-break space (U+00A0, just after C1) is unchanged", "a\u00a0b", {}, "a\u00a0b"],
    ["a tilde (just before DEL) is unchanged", "~", {}, "~"],
    ["ESC of a CSI that clears the screen", "x\u001b[2Jy", {}, "x^[[2Jy"],
    ["a CSI that recolours", "\u001b[31mred\u001b[0m", {}, "^[[31mred^[[0m"],
    ["BEL", "ding\u0007", {}, "ding^G"],
    ["an OSC that sets the window title (ESC ] … BEL)", "\u001b]0;pwned\u0007", {}, "^[]0;pwned^G"],
    ["an OSC 8 hyperlink ended by ST (ESC \\)", "\u001b]8;;http://x\u001b\\", {}, "^[]8;;http://x^[\\"],
    ["NUL", "a\u0000b", {}, "a^@b"],
    ["backspace, which would hide what precedes it", "ok\bX", {}, "ok^HX"],
    ["unit separator, the last C0", "\u001f", {}, "^_"],
    ["DEL", "a\u007fb", {}, "a^?b"],
    ["the one-character CSI of C1 (U+009B)", "\u009b31mred", {}, "<U+009B>31mred"],
    ["the one-character OSC (U+009D) and ST (U+009C) of C1", "\u009d0;x\u009c", {}, "<U+009D>0;x<U+009C>"],
    ["the first and last C1 characters", "\u0080\u009f", {}, "<U+0080><U+009F>"],
    ["NEL (U+0085)", "a\u0085b", {}, "a<U+0085>b"],
    ["a right-to-left override (Trojan Source)", "abc\u202edef", {}, "abc<U+202E>def"],
    ["the bidi embeddings and pop", "\u202a\u202b\u202c\u202d", {}, "<U+202A><U+202B><U+202C><U+202D>"],
    ["the bidi isolates", "\u2066\u2067\u2068\u2069", {}, "<U+2066><U+2067><U+2068><U+2069>"],
    ["the bidi marks (RLM, LRM) are left: they reorder no other text", "a\u200fb\u200ec", {}, "a\u200fb\u200ec"],
    ["a newline on a single line", "one\ntwo", {}, "one^Jtwo"],
    ["a newline where text has several lines", "one\ntwo", { newlines: true }, "one\ntwo"],
    ["CRLF where text has several lines", "one\r\ntwo", { newlines: true }, "one\ntwo"],
    [
      "a lone CR, which would overwrite the line, even on several lines",
      "safe\rEVIL",
      { newlines: true },
      "safe^MEVIL",
    ],
    ["a tab on a single line", "a\tb", {}, "a^Ib"],
    ["a tab where tabs are kept", "a\tb", { tabs: true }, "a\tb"],
    ["a tab is not kept by newlines alone", "a\tb", { newlines: true }, "a^Ib"],
    [
      "everything of the escape test at once",
      "n \u001b[2J \u0007 \u001b]0;pwned\u0007 \u009b31m \u009d0;x\u009c",
      {},
      "n ^[[2J ^G ^[]0;pwned^G <U+009B>31m <U+009D>0;x<U+009C>",
    ],
  ] as const)("%s", (_what, input, options, shown) => {
    expect(terminalText(input, options)).toBe(shown);
  });

  it("gives every C0 character its caret letter and DEL ^?", () => {
    const c0 = Array.from({ length: 32 }, (_, code) => String.fromCharCode(code));
    expect(c0.map(visibleForm).join(" ")).toBe(
      "^@ ^A ^B ^C ^D ^E ^F ^G ^H ^I ^J ^K ^L ^M ^N ^O ^P ^Q ^R ^S ^T ^U ^V ^W ^X ^Y ^Z ^[ ^\\ ^] ^^ ^_",
    );
    expect(visibleForm("\u007f")).toBe("^?");
  });

  it("leaves no character a terminal acts on, whatever the string (and keeps only \\n and \\t when asked)", () => {
    fc.assert(
      fc.property(fc.string({ unit: "binary" }), fc.boolean(), fc.boolean(), (text, newlines, tabs) => {
        const shown = terminalText(text, { newlines, tabs });
        const rest = shown.replace(newlines ? /\n/g : /$^/g, "").replace(tabs ? /\t/g : /$^/g, "");
        expect(rest).not.toMatch(RAW_CONTROL);
        if (!RAW_CONTROL.test(text)) expect(shown).toBe(text);
      }),
      { numRuns: 500 },
    );
  });
});

describe("terminalJson", () => {
  it.each([
    ["C1 characters", { name: "\u009b31m \u009d0;x\u009c" }, '{"name":"\\u009b31m \\u009d0;x\\u009c"}'],
    ["DEL", { name: "a\u007f" }, '{"name":"a\\u007f"}'],
    ["bidi controls, in keys too", { "k\u202e": "\u2066x\u2069" }, '{"k\\u202e":"\\u2066x\\u2069"}'],
    ["C0, which JSON.stringify escapes already", { name: "\u001b[2J\u0007" }, '{"name":"\\u001b[2J\\u0007"}'],
    ["plain data", { name: "Café", n: 1 }, '{"name":"Café","n":1}'],
  ])("escapes %s", (_what, value, expected) => {
    expect(terminalJson(JSON.stringify(value))).toBe(expected);
  });

  it("keeps the layout of indented JSON", () => {
    expect(terminalJson(JSON.stringify({ a: ["\u009b"] }, null, 2))).toBe('{\n  "a": [\n    "\\u009b"\n  ]\n}');
  });

  it("is the same JSON: it parses back to exactly the same value, with no raw control character left", () => {
    fc.assert(
      fc.property(
        fc.jsonValue(),
        fc.dictionary(fc.string({ unit: "binary" }), fc.string({ unit: "binary" })),
        (a, b) => {
          for (const value of [a, b]) {
            const text = terminalJson(JSON.stringify(value, null, 2));
            expect(text.replace(/\n/g, "")).not.toMatch(RAW_CONTROL);
            expect(JSON.parse(text)).toEqual(JSON.parse(JSON.stringify(value)));
          }
        },
      ),
      { numRuns: 500 },
    );
  });
});
