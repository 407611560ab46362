import { commonJs } from "./lazy-modules.js";

/** The light margin a reader needs around the code, in modules (ISO/IEC 18004 asks for 4). */
const QUIET_ZONE = 4;

/** Black on bright white, whatever the terminal's theme; reset at each line's end. */
const DARK_ON_LIGHT = "\u001b[30m\u001b[107m";
const RESET = "\u001b[0m";

/**
 * A QR code as text, two module rows a line in half blocks: a dark module is drawn in the
 * foreground. In colour the foreground is black on a white background, so the code reads alike
 * on a dark and a light theme; without colour (NO_COLOR, --no-color) the blocks are the dark
 * modules, which reads on a light theme only, and the caller prints the key beside it.
 */
export async function qrCodeLines(text: string, color: boolean): Promise<string[]> {
  const qrcode = commonJs(await import("qrcode"));
  const { modules } = qrcode.create(text, { errorCorrectionLevel: "M" });
  const size = modules.size + 2 * QUIET_ZONE;
  const dark = (row: number, column: number) => {
    const r = row - QUIET_ZONE;
    const c = column - QUIET_ZONE;
    return r >= 0 && c >= 0 && r < modules.size && c < modules.size && Boolean(modules.get(r, c));
  };
  const lines: string[] = [];
  for (let row = 0; row < size; row += 2) {
    let line = "";
    for (let column = 0; column < size; column++) {
      const top = dark(row, column);
      const bottom = row + 1 < size && dark(row + 1, column);
      line += top ? (bottom ? "█" : "▀") : bottom ? "▄" : " ";
    }
    lines.push(color ? `${DARK_ON_LIGHT}${line}${RESET}` : line);
  }
  return lines;
}
