/**
 * Text made safe to show on a terminal.
 *
 * Any member can store an event name (or a display name, a custom attribute…) holding escape
 * sequences; printed as is, they clear an admin's screen, recolour it, set the window title or
 * hide text. A terminal acts on C0 controls (ESC, BEL, CR…), DEL and C1 controls (U+009B is a
 * one-character CSI, U+009D an OSC), and some terminals reorder text at bidi controls.
 *
 * Such a character is replaced by a visible, inert form:
 * - C0 and DEL in caret notation, as `cat -v` and `less` print them: ESC is `^[`, BEL `^G`,
 *   DEL `^?`;
 * - C1 and the bidi embedding, override and isolate controls (U+202A–U+202E, U+2066–U+2069,
 *   the "Trojan Source" characters) as `<U+009B>`, as `less` prints them.
 */

// biome-ignore lint/suspicious/noControlCharactersInRegex: finding control characters is the point
const UNSAFE = /[\u0000-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/;
// biome-ignore lint/suspicious/noControlCharactersInRegex: finding control characters is the point
const UNSAFE_ALL = /[\u0000-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/g;
/** What JSON.stringify leaves raw: it escapes C0 itself, and its own layout uses `\n` outside strings. */
const UNSAFE_IN_JSON = /[\u007f-\u009f\u202a-\u202e\u2066-\u2069]/;
const UNSAFE_IN_JSON_ALL = /[\u007f-\u009f\u202a-\u202e\u2066-\u2069]/g;

export interface TerminalTextOptions {
  /**
   * Keep line feeds, for text laid out on several lines (a record's value, an e-mail). A CR
   * before one goes with it; any other CR is shown, since it would let the rest of the line
   * overwrite its start.
   */
  newlines?: boolean;
  /** Keep tabs, where nothing is aligned after them. */
  tabs?: boolean;
}

/** The visible form of one unsafe character: `^[` for ESC, `^?` for DEL, `<U+009B>` for C1 and bidi controls. */
export function visibleForm(char: string): string {
  const code = char.codePointAt(0) ?? 0;
  if (code < 0x20) return `^${String.fromCharCode(code + 0x40)}`;
  if (code === 0x7f) return "^?";
  return `<U+${code.toString(16).toUpperCase().padStart(4, "0")}>`;
}

/** The text with every C0, DEL, C1 and bidi control in its visible form (see the options for `\n` and `\t`). */
export function terminalText(text: string, options: TerminalTextOptions = {}): string {
  if (!UNSAFE.test(text)) return text;
  const source = options.newlines ? text.replace(/\r\n/g, "\n") : text;
  return source.replace(UNSAFE_ALL, (char) => {
    if ((char === "\n" && options.newlines) || (char === "\t" && options.tabs)) return char;
    return visibleForm(char);
  });
}

/**
 * JSON text (from JSON.stringify) for a terminal: DEL, C1 and bidi controls as `\uXXXX`
 * escapes. Still the same JSON: it parses back to exactly the same values. The same holds for
 * such characters inside a YAML double-quoted scalar.
 */
export function terminalJson(json: string): string {
  return json.replace(UNSAFE_IN_JSON_ALL, (char) => `\\u${(char.codePointAt(0) ?? 0).toString(16).padStart(4, "0")}`);
}

/** Whether the text holds a character that `terminalJson` escapes. */
export function needsJsonEscape(text: string): boolean {
  return UNSAFE_IN_JSON.test(text);
}
