import { styleText } from "node:util";
import type { IO } from "./io.js";
import { terminalText } from "./terminal-text.js";

/**
 * A prompt may quote stored data ("Delete event X (its name)?", a current value offered as the
 * default, an error from the server): what it shows has its control characters in their
 * visible form. The answer it returns is what was typed, or the default unchanged.
 */
const theme = {
  style: {
    answer: (text: string) => styleText("cyan", terminalText(text)),
    defaultAnswer: (text: string) => styleText("dim", `(${terminalText(text)})`),
    error: (text: string) => styleText("red", `> ${terminalText(text)}`),
  },
};

/** Prompts through @inquirer/prompts on the given terminal; loaded only when a prompt is shown. */
export async function promptText(
  io: IO,
  message: string,
  options: { default?: string; validate?: (v: string) => true | string } = {},
) {
  const { input } = await import("@inquirer/prompts");
  return input(
    {
      message: terminalText(message),
      default: options.default,
      validate: options.validate ?? ((v) => (v.trim() ? true : "required")),
      transformer: (value, { isFinal }) => (isFinal ? theme.style.answer(value) : terminalText(value)),
      theme,
    },
    streams(io),
  );
}

export async function promptPassword(
  io: IO,
  message: string,
  validate: (value: string) => true | string = () => true,
): Promise<string> {
  const { password } = await import("@inquirer/prompts");
  return password(
    { message: terminalText(message), mask: "*", validate: (v) => (v ? validate(v) : "required"), theme },
    streams(io),
  );
}

export async function promptConfirm(io: IO, message: string, defaultAnswer = false): Promise<boolean> {
  const { confirm } = await import("@inquirer/prompts");
  return confirm({ message: terminalText(message), default: defaultAnswer, theme }, streams(io));
}

function streams(io: IO) {
  return { input: io.stdin, output: io.stderr, clearPromptOnDone: false };
}
