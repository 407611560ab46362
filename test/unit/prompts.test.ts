/**
 * The prompts on in-memory streams: what they show has control characters in their visible
 * form, what they return is exactly what was typed or the default.
 */
import { PassThrough, Writable } from "node:stream";
import { describe, expect, it } from "vitest";
import type { IO } from "../../src/cli/io.js";
import { promptConfirm, promptText } from "../../src/cli/prompts.js";

const HOSTILE = "x\u001b[2J\u0007\u001b]0;pwned\u0007\u009b31m\u009d0;x\u009c";
const SHOWN = "x^[[2J^G^[]0;pwned^G<U+009B>31m<U+009D>0;x<U+009C>";

/** A prompt's streams: the keys to type, and everything it wrote. */
function terminal(keys: string[]) {
  const stdin = new PassThrough();
  let written = "";
  const stderr = new Writable({
    write(chunk, _encoding, done) {
      written += String(chunk);
      done();
    },
  });
  const io = { stdin, stdout: stderr, stderr, env: {} } as unknown as IO;
  // each key once the prompt has drawn itself
  for (const [index, key] of keys.entries()) setTimeout(() => stdin.write(key), 50 * (index + 1));
  return { io, written: () => written };
}

// biome-ignore lint/suspicious/noControlCharactersInRegex: the prompt's own CSI sequences
const OWN_CSI = /\u001b\[[0-9;?]*[A-Za-z]/g;
/** What the prompt drew, without its own escape sequences (cursor moves, colours). */
const drawn = (text: string) => text.replace(OWN_CSI, "");
/** BEL, C1, an OSC/DCS/PM/APC opener, or the data's clear-screen CSI */
// biome-ignore lint/suspicious/noControlCharactersInRegex: finding control characters is the point
const FROM_DATA = /[\u0007\u0080-\u009f]|\u001b[\]P^_]|\u001b\[2J/;

describe("prompts show stored data safely", () => {
  it("shows a default holding escapes in its visible form, and returns it unchanged on Enter", async () => {
    const t = terminal(["\r"]);
    const answer = await promptText(t.io, "Name", { default: HOSTILE });
    expect(answer).toBe(HOSTILE);
    expect(drawn(t.written())).toContain(`Name (${SHOWN})`);
    expect(drawn(t.written())).not.toMatch(FROM_DATA);
  });

  it("shows what is typed in its visible form, and returns it exactly", async () => {
    const t = terminal(["a\u009bb", "\r"]);
    const answer = await promptText(t.io, "Name");
    expect(answer).toBe("a\u009bb");
    expect(drawn(t.written())).toContain("a<U+009B>b");
    expect(t.written()).not.toMatch(/[\u0080-\u009f]/);
  });

  it("shows a question quoting stored data in its visible form", async () => {
    const t = terminal(["ok\r"]);
    await promptText(t.io, `Rename ${HOSTILE}?`);
    expect(drawn(t.written())).toContain(`Rename ${SHOWN}?`);
    expect(drawn(t.written())).not.toMatch(FROM_DATA);
  });

  it("shows a confirmation quoting a name in its visible form", async () => {
    const t = terminal(["n\r"]);
    expect(await promptConfirm(t.io, `Delete event EVIL (${HOSTILE})?`)).toBe(false);
    expect(drawn(t.written())).toContain(`Delete event EVIL (${SHOWN})?`);
    expect(drawn(t.written())).not.toMatch(FROM_DATA);
  });
});
