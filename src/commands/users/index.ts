import type { Command } from "commander";
import type { Context } from "../../cli/command-context.js";
import * as create from "./create.js";
import * as del from "./delete.js";
import * as deleted from "./deleted.js";
import * as diagnose from "./diagnose.js";
import * as disable from "./disable.js";
import * as enable from "./enable.js";
import * as exportUsers from "./export.js";
import * as get from "./get.js";
import * as importUsers from "./import.js";
import * as invite from "./invite.js";
import * as list from "./list.js";
import * as mfaReset from "./mfa-reset.js";
import * as resetPassword from "./reset-password.js";
import * as search from "./search.js";
import * as sessions from "./sessions.js";
import * as setPassword from "./set-password.js";
import * as setRoles from "./set-roles.js";
import * as signOut from "./sign-out.js";
import * as syncUsers from "./sync.js";
import * as tokens from "./tokens.js";
import * as unlock from "./unlock.js";
import * as update from "./update.js";

export function register(program: Command, io: Context["io"]): void {
  const group = program.command("users").description("shorthands over resources of type User");
  for (const verb of [
    list,
    search,
    create,
    get,
    update,
    setRoles,
    del,
    deleted,
    setPassword,
    resetPassword,
    disable,
    enable,
    unlock,
    invite,
    importUsers,
    exportUsers,
    syncUsers,
    sessions,
    signOut,
    tokens,
    mfaReset,
    diagnose,
  ]) {
    verb.register(group, io);
  }
}
