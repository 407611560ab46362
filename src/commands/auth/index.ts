import type { Command } from "commander";
import type { Context } from "../../cli/command-context.js";
import * as changePassword from "./change-password.js";
import * as firstLogin from "./first-login.js";
import * as login from "./login.js";
import * as logout from "./logout.js";
import * as mfa from "./mfa.js";
import * as renewPassword from "./renew-password.js";
import * as resetPassword from "./reset-password.js";
import * as sessions from "./sessions.js";
import * as signOut from "./sign-out.js";
import * as status from "./status.js";
import * as token from "./token.js";
import * as tokens from "./tokens.js";

export function register(program: Command, io: Context["io"]): void {
  const group = program.command("auth").description("log in and out, passwords, the stored token, API tokens");
  for (const verb of [
    login,
    logout,
    status,
    token,
    firstLogin,
    changePassword,
    renewPassword,
    resetPassword,
    sessions,
    signOut,
    mfa,
    tokens,
  ])
    verb.register(group, io);
}
