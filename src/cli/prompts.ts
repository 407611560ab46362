import type { IO } from "./io.js";

/** Prompts through @inquirer/prompts on the given terminal; loaded only when a prompt is shown. */
export async function promptText(
  io: IO,
  message: string,
  options: { default?: string; validate?: (v: string) => true | string } = {},
) {
  const { input } = await import("@inquirer/prompts");
  return input(
    { message, default: options.default, validate: options.validate ?? ((v) => (v.trim() ? true : "required")) },
    streams(io),
  );
}

export async function promptPassword(io: IO, message: string): Promise<string> {
  const { password } = await import("@inquirer/prompts");
  return password({ message, mask: "*", validate: (v) => (v ? true : "required") }, streams(io));
}

export async function promptConfirm(io: IO, message: string): Promise<boolean> {
  const { confirm } = await import("@inquirer/prompts");
  return confirm({ message, default: false }, streams(io));
}

function streams(io: IO) {
  return { input: io.stdin, output: io.stderr, clearPromptOnDone: false };
}
