import type { Context } from "../../cli/command-context.js";
import { UsageError } from "../../cli/errors.js";
import { readNewPassword } from "../../cli/passwords.js";
import { generatePassword } from "../../contract/passwords.js";

/** The temporary password: read from stdin, or generated; `--no-password` invites instead. */
export async function temporaryPassword(ctx: Context, options: { passwordStdin?: boolean; generate?: boolean }) {
  if (options.passwordStdin) {
    const chosen = await readNewPassword(ctx.io, {
      stdin: true,
      index: 0,
      prompt: "Temporary password",
      canPrompt: false,
    });
    if (!chosen) throw new UsageError("--password-stdin was given but stdin is empty.");
    return { password: chosen, generated: false };
  }
  if (options.generate === false && ctx.canPrompt()) {
    const chosen = await readNewPassword(ctx.io, { index: 0, prompt: "Temporary password", canPrompt: true });
    if (chosen) return { password: chosen, generated: false };
  }
  return { password: generatePassword(), generated: true };
}
