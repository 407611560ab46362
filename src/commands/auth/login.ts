import type { Command } from "commander";
import type { Context } from "../../cli/command-context.js";
import { UsageError } from "../../cli/errors.js";
import { stdinLine, writeLine } from "../../cli/io.js";
import { emptyStdin, readNewPassword, requirePassword } from "../../cli/passwords.js";
import { promptText } from "../../cli/prompts.js";
import type { ApiClient } from "../../client/client.js";
import { ApiError } from "../../client/errors.js";
import * as auth from "../../contract/auth.js";
import { endSession } from "../session-end.js";
import { examples, withContext } from "../verb-helpers.js";
import { changeOwnPassword } from "./change-password.js";
import { printLoginResult } from "./login-result.js";
import { loginWithToken } from "./login-with-token.js";
import { endReplacedSession } from "./replaced-session.js";

interface Options {
  user?: string;
  passwordStdin?: boolean;
  withToken?: boolean;
}

/**
 * Asks for a new password right after a login with a temporary one. On a terminal a refused
 * password (too short, too common) is asked for again; from stdin the refusal is the answer.
 */
async function replaceTemporaryPassword(
  ctx: Context,
  current: string,
  options: Options & { nextLine: number; userName: string; token?: string },
): Promise<boolean> {
  ctx.info("Your password is temporary: choose a new one now.");
  for (;;) {
    const newPassword = await readNewPassword(ctx.io, {
      stdin: options.passwordStdin,
      index: options.nextLine,
      prompt: "New password",
      canPrompt: ctx.canPrompt(),
      userName: options.userName,
    });
    if (!newPassword) return false;
    try {
      await changeOwnPassword(ctx, current, newPassword, options.token);
      return true;
    } catch (error) {
      const weak = error instanceof ApiError && error.problem.code === "weak_password";
      if (!weak || options.passwordStdin || !ctx.canPrompt()) throw error;
      writeLine(ctx.io, `${error.problem.detail} Try another.`);
    }
  }
}

/**
 * A first login that has no new password to give (no next line of --password-stdin, no terminal)
 * would keep a session that every command but change-password refuses (exit 5): it is ended on the
 * server, nothing is stored, and the login fails naming what is missing.
 */
async function requireNewPasswordSource(
  ctx: Context,
  client: ApiClient,
  data: { token: string; linesRead: number },
  options: Options,
): Promise<void> {
  const available = options.passwordStdin ? await stdinLine(ctx.io, data.linesRead) : ctx.canPrompt();
  if (available) return;
  await endSession(client, data.token);
  if (options.passwordStdin) throw emptyStdin("the new password (this password is temporary)", data.linesRead);
  throw new UsageError(
    "This password is temporary and must be replaced at this login, and there is no terminal to ask for the new one.",
    "log in on a terminal, or give --password-stdin the password, then the new one, one a line",
  );
}

/** Tries of a code on a terminal before the login fails (the server's back-off still counts each). */
const CODE_TRIES = 3;

/**
 * The login, and when the account has a second factor (401 mfa_required) the same login again
 * with its code: asked for on a terminal, else the next line of --password-stdin. Never a flag
 * value, which would stay in the shell's history and the process list. On a terminal a wrong code
 * asks for the code again, not the password: it is held in memory for those tries only.
 * `linesRead`: the stdin lines used, so that a new password on a first login is the line after them.
 */
async function loginWithSecondFactor(
  ctx: Context,
  credentials: { userName: string; password: string },
  options: Options,
) {
  const client = await ctx.client();
  try {
    const { data } = await client.call(auth.login, { body: credentials });
    return { ...data, linesRead: 1 };
  } catch (error) {
    if (!(error instanceof ApiError) || error.problem.code !== "mfa_required") throw error;
  }
  const canRetry = !options.passwordStdin && ctx.canPrompt();
  for (let tried = 1; ; tried++) {
    const otp = await requirePassword(ctx.io, {
      stdin: options.passwordStdin,
      index: 1,
      prompt: "Authentication code (or a recovery code)",
      canPrompt: ctx.canPrompt(),
    });
    try {
      const { data } = await client.call(auth.login, { body: { ...credentials, otp: otp.trim() } });
      return { ...data, linesRead: 2 };
    } catch (error) {
      const wrong = error instanceof ApiError && error.problem.code === "invalid_otp";
      if (!wrong || !canRetry || tried >= CODE_TRIES) throw error;
      const left = CODE_TRIES - tried;
      writeLine(
        ctx.io,
        `That code is wrong, expired or already used; type the current one (${left} ${left === 1 ? "try" : "tries"} left).`,
      );
    }
  }
}

/** After a login with a recovery code: how many are left, and how to make new ones. */
function sayRecoveryCodesLeft(ctx: Context, left: number | undefined): void {
  if (left === undefined) return;
  const codes = `${left === 0 ? "No" : left} recovery code${left === 1 ? "" : "s"} left`;
  ctx.info(
    `You logged in with a recovery code: ${codes}. 'bizctl auth mfa disable' then 'bizctl auth mfa enroll' set up your authenticator app again with new codes.`,
  );
}

export async function login(ctx: Context, options: Options): Promise<void> {
  if (options.withToken) {
    if (options.user || options.passwordStdin) {
      throw new UsageError(
        "--with-token takes an API token from stdin, not a user name or a password.",
        "give --with-token alone, or --user NAME without it",
      );
    }
    return loginWithToken(ctx);
  }
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
  const data = await loginWithSecondFactor(ctx, { userName, password }, options);
  if (data.firstLogin) await requireNewPasswordSource(ctx, client, data, options);
  // scripted, the new password is changed before the session is kept: refused, it keeps none
  const scripted = data.firstLogin && options.passwordStdin === true;
  if (scripted) {
    try {
      await replaceTemporaryPassword(ctx, password, {
        ...options,
        userName,
        nextLine: data.linesRead,
        token: data.token,
      });
    } catch (error) {
      await endSession(client, data.token);
      throw error;
    }
  }
  const profile = ctx.profile;
  await ctx.profiles.save(ctx.profileName, {
    ...profile,
    auth: { token: data.token, expiresAt: data.expiresAt, user: data.user },
  });
  ctx.info(
    `Logged in to ${client.transport.description} as ${data.user.userName} (${data.user.roles.join(", ") || "no roles"}); profile '${ctx.profileName}', expires ${data.expiresAt}.`,
  );
  await endReplacedSession(ctx, profile.auth, data.token);
  sayRecoveryCodesLeft(ctx, data.recoveryCodesLeft);

  const firstLogin =
    data.firstLogin &&
    !scripted &&
    !(await replaceTemporaryPassword(ctx, password, { ...options, userName, nextLine: data.linesRead }));
  const mfaEnrollmentRequired = data.mfaEnrollmentRequired === true;
  if (mfaEnrollmentRequired) {
    ctx.info(
      "This server requires a second factor of your role: run 'bizctl auth mfa enroll'. Until then only 'bizctl auth mfa' and 'bizctl auth logout' work.",
    );
  }
  await printLoginResult(ctx, client.transport.description, data, {
    firstLogin,
    ...(mfaEnrollmentRequired && { mfaEnrollmentRequired }),
  });
}

export function register(group: Command, io: Context["io"]): void {
  group
    .command("login")
    .description("log in and keep the token in the profile (or keep an API token read from stdin: --with-token)")
    .option("-u, --user <name>", "user name (prompted for on a terminal)")
    .option(
      "--password-stdin",
      "read the password from the first line of stdin, then the second factor's code from the next (with one), then a first login's new password",
    )
    .option("--with-token", "read an API token (bzt_...) from the first line of stdin, check it and keep it instead")
    .addHelpText(
      "after",
      examples(
        "bizctl auth login --user admin",
        "printf '%s\\n' \"$PASSWORD\" | bizctl auth login --user admin --password-stdin",
        "bizctl --profile prod auth login --user admin",
        "printf '%s\\n' \"$API_TOKEN\" | bizctl auth login --with-token",
        "bizctl auth tokens create --name laptop --json | jq -r .token | bizctl --profile prod auth login --with-token",
      ),
    )
    .action(withContext(io, login));
}
