import type { Command } from "commander";
import type { Context } from "../../cli/command-context.js";
import { UsageError } from "../../cli/errors.js";
import { writeLine } from "../../cli/io.js";
import { readNewPassword, requirePassword } from "../../cli/passwords.js";
import { promptText } from "../../cli/prompts.js";
import { ApiError } from "../../client/errors.js";
import * as auth from "../../contract/auth.js";
import { examples, withContext } from "../verb-helpers.js";
import { changeOwnPassword } from "./change-password.js";

interface Options {
  user?: string;
  passwordStdin?: boolean;
}

/**
 * Asks for a new password right after a login with a temporary one. On a terminal a refused
 * password (too short, too common) is asked for again; from stdin the refusal is the answer.
 */
async function replaceTemporaryPassword(ctx: Context, current: string, options: Options): Promise<boolean> {
  ctx.info("Your password is temporary: choose a new one now.");
  for (;;) {
    const newPassword = await readNewPassword(ctx.io, {
      stdin: options.passwordStdin,
      index: 1,
      prompt: "New password",
      canPrompt: ctx.canPrompt(),
    });
    if (!newPassword) {
      ctx.info("Until you change it, only 'bizctl auth change-password' and 'bizctl auth logout' work.");
      return false;
    }
    try {
      await changeOwnPassword(ctx, current, newPassword);
      return true;
    } catch (error) {
      const weak = error instanceof ApiError && error.problem.code === "weak_password";
      if (!weak || options.passwordStdin || !ctx.canPrompt()) throw error;
      writeLine(ctx.io, `${error.problem.detail} Try another.`);
    }
  }
}

export async function login(ctx: Context, options: Options): Promise<void> {
  ctx.refuseServerOverride("auth login");
  const userName = options.user ?? (ctx.canPrompt() ? await promptText(ctx.io, "User name") : undefined);
  if (!userName) throw new UsageError("A user name is required.", "pass --user NAME");
  const password = await requirePassword(ctx.io, {
    stdin: options.passwordStdin,
    index: 0,
    env: "BIZCTL_PASSWORD",
    prompt: "Password",
    canPrompt: ctx.canPrompt(),
  });
  const client = await ctx.client();
  const { data } = await client.call(auth.login, { body: { userName, password } });
  const profile = ctx.profile;
  await ctx.profiles.save(ctx.profileName, {
    ...profile,
    auth: { token: data.token, expiresAt: data.expiresAt, user: data.user },
  });
  ctx.info(
    `Logged in to ${client.transport.description} as ${data.user.userName} (${data.user.roles.join(", ") || "no roles"}); profile '${ctx.profileName}', expires ${data.expiresAt}.`,
  );

  const firstLogin = data.firstLogin && !(await replaceTemporaryPassword(ctx, password, options));
  if (!ctx.io.stdout.isTTY || ctx.globals.json || ctx.globals.output) {
    await ctx.print({
      profile: ctx.profileName,
      server: client.transport.description,
      user: data.user.userName,
      userId: data.user.id,
      roles: data.user.roles,
      expiresAt: data.expiresAt,
      firstLogin,
    });
  }
}

export function register(group: Command, io: Context["io"]): void {
  group
    .command("login")
    .description("log in and keep the token in the profile")
    .option("-u, --user <name>", "user name (prompted for on a terminal)")
    .option(
      "--password-stdin",
      "read the password from the first line of stdin (on a first login, the new one from the second)",
    )
    .addHelpText(
      "after",
      examples(
        "bizctl auth login --user admin",
        "printf '%s\\n' \"$PASSWORD\" | bizctl auth login --user admin --password-stdin",
        "bizctl --profile prod auth login --user admin",
      ),
    )
    .action(withContext(io, login));
}
