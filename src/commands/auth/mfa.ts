import type { Command } from "commander";
import type { Context } from "../../cli/command-context.js";
import { UsageError } from "../../cli/errors.js";
import { stdinLine, writeLine } from "../../cli/io.js";
import { requirePassword } from "../../cli/passwords.js";
import { promptText } from "../../cli/prompts.js";
import { qrCodeLines } from "../../cli/qr-code.js";
import { ApiError } from "../../client/errors.js";
import * as mfa from "../../contract/mfa.js";
import { examples, withContext } from "../verb-helpers.js";

/** Tries of a first code on a terminal before enrollment gives up (it stays pending). */
const FIRST_CODE_TRIES = 3;

const isPerson = (ctx: Context) => ctx.canPrompt() && !ctx.globals.json && !ctx.globals.output;

/** The QR code of the key URI, black on white with its quiet zone, so that it reads on any theme. */
async function drawQrCode(ctx: Context, uri: string): Promise<void> {
  ctx.io.stdout.write(`${(await qrCodeLines(uri, ctx.color)).join("\n")}\n`);
}

async function activate(ctx: Context, code: string) {
  const { data } = await (await ctx.client()).call(mfa.verifyTotp, { body: { code: code.trim() } });
  return data;
}

/** The recovery codes, said once: on a terminal as lines to copy, else the answer as data. */
async function showRecoveryCodes(ctx: Context, activation: Awaited<ReturnType<typeof activate>>): Promise<void> {
  if (!isPerson(ctx)) {
    await ctx.print(activation);
    return;
  }
  ctx.info("Second factor on. Keep these recovery codes somewhere safe: each logs in once without the app.");
  ctx.info("They are shown this once.");
  ctx.printText(`${activation.recoveryCodes.join("\n")}\n`);
}

async function enroll(ctx: Context): Promise<void> {
  ctx.requireCredential();
  const { data } = await (await ctx.client()).call(mfa.startTotp);
  if (!isPerson(ctx)) {
    await ctx.print(data);
    ctx.info("Then activate it with the app's first code: bizctl auth mfa verify --code-stdin (the code on stdin).");
    return;
  }
  await drawQrCode(ctx, data.uri);
  ctx.info(`Scan it with an authenticator app, or enter this key: ${data.secret}`);
  ctx.info(`(the key's link, for an app on this computer: ${data.uri})`);
  for (let tries = 1; ; tries++) {
    const code = await promptText(ctx.io, "The app's code", {
      validate: (value) => (/^\d{6}$/.test(value.trim()) ? true : "six digits"),
    });
    try {
      await showRecoveryCodes(ctx, await activate(ctx, code));
      return;
    } catch (error) {
      const wrong = error instanceof ApiError && error.problem.code === "invalid_otp";
      if (!wrong || tries === FIRST_CODE_TRIES) throw error;
      writeLine(ctx.io, "That code was not right: check the app's clock and try the next one.");
    }
  }
}

async function verify(ctx: Context, options: { codeStdin?: boolean }): Promise<void> {
  ctx.requireCredential();
  let code: string | undefined;
  if (options.codeStdin) code = await stdinLine(ctx.io, 0);
  else if (ctx.canPrompt()) code = await promptText(ctx.io, "The app's code");
  if (!code?.trim()) {
    throw new UsageError(
      options.codeStdin
        ? "--code-stdin was given, but stdin is empty."
        : "A code is required and there is no terminal to ask on.",
      "write the app's current code as the first line of stdin, with --code-stdin",
    );
  }
  await showRecoveryCodes(ctx, await activate(ctx, code));
}

async function status(ctx: Context): Promise<void> {
  ctx.requireCredential();
  const { data } = await (await ctx.client()).call(mfa.totpStatus);
  await ctx.print(data);
}

async function disable(ctx: Context, options: { passwordStdin?: boolean }): Promise<void> {
  ctx.requireCredential();
  const source = { stdin: options.passwordStdin, canPrompt: ctx.canPrompt() };
  const password = await requirePassword(ctx.io, { ...source, index: 0, prompt: "Password" });
  const code = await requirePassword(ctx.io, { ...source, index: 1, prompt: "The app's code (or a recovery code)" });
  await (await ctx.client()).call(mfa.removeTotp, { body: { password, code: code.trim() } });
  ctx.info("Second factor removed: logins take the password alone.");
}

export function register(parent: Command, io: Context["io"]): void {
  const group = parent.command("mfa").description("your second factor (TOTP): enroll, verify, status, disable");
  group
    .command("enroll")
    .description("start a TOTP second factor: on a terminal a QR code, the first code, then the recovery codes once")
    .addHelpText(
      "after",
      examples("bizctl auth mfa enroll", "bizctl auth mfa enroll --json   # the key and its URI, for a script"),
    )
    .action(withContext(io, enroll));
  group
    .command("verify")
    .description("activate the pending factor with the app's current code; prints the recovery codes once")
    .option("--code-stdin", "read the code from the first line of stdin")
    .addHelpText(
      "after",
      examples("bizctl auth mfa verify", "printf '%s\\n' \"$CODE\" | bizctl auth mfa verify --code-stdin"),
    )
    .action(withContext(io, verify));
  group
    .command("status")
    .description("whether your second factor is on, since when, and the recovery codes left")
    .addHelpText("after", examples("bizctl auth mfa status", "bizctl auth mfa status --json"))
    .action(withContext(io, status));
  group
    .command("disable")
    .description("remove your second factor, with your password and a code")
    .option("--password-stdin", "read the password from the first line of stdin and the code from the second")
    .addHelpText(
      "after",
      examples(
        "bizctl auth mfa disable",
        'printf \'%s\\n%s\\n\' "$PASSWORD" "$CODE" | bizctl auth mfa disable --password-stdin',
      ),
    )
    .action(withContext(io, disable));
}
