import type { Command } from "commander";
import type { Context } from "../../cli/command-context.js";
import * as create from "./create.js";
import * as del from "./delete.js";
import * as deleted from "./deleted.js";
import * as get from "./get.js";
import * as list from "./list.js";
import * as members from "./members.js";
import * as membership from "./membership.js";
import * as setRoles from "./set-roles.js";

export function register(program: Command, io: Context["io"]): void {
  const group = program.command("groups").description("groups of users and the roles they grant (SCIM /Groups)");
  for (const verb of [list, get, create, del, deleted, members, membership, setRoles]) verb.register(group, io);
}
