import type { Command } from "commander";
import type { Context, MorePages } from "../../cli/context.js";
import { UsageError } from "../../cli/errors.js";
import { readNewPassword } from "../../cli/passwords.js";
import { promptText } from "../../cli/prompts.js";
import { fieldValidator, merge, recordFromOptions } from "../../cli/record-input.js";
import * as auth from "../../contract/auth.js";
import { generatePassword } from "../../contract/passwords.js";
import * as resources from "../../contract/resources.js";
import { recentActivity } from "../audit/shared.js";
import { createResource } from "../resources/create.js";
import { type ListOptions, listOptions, listResources } from "../resources/list.js";
import { updateResource } from "../resources/update.js";
import { collect, examples, tolerating, withContext } from "../shared.js";
import * as exportUsers from "./export.js";
import * as importUsers from "./import.js";
import * as invite from "./invite.js";
import { resolveUser } from "./resolve.js";
import * as sessions from "./sessions.js";
import * as signOut from "./sign-out.js";

const USER_COLUMNS = ["id", "userName", "displayName", "active", "roles", "firstLogin", "locked", "invited"];
const ROLES = ["admin", "support", "member"];

interface CreateOptions {
  userName?: string;
  email?: string;
  role?: string[];
  set?: string[];
  file?: string;
  passwordStdin?: boolean;
  password?: boolean;
  invite?: boolean;
  ifNotExists?: boolean;
}

/** The temporary password: read from stdin, or generated; `--no-password` invites instead. */
async function temporaryPassword(ctx: Context, options: { passwordStdin?: boolean; generate?: boolean }) {
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

async function createUser(ctx: Context, options: CreateOptions): Promise<void> {
  ctx.requireCredential();
  const record = await recordFromOptions(ctx.io, options);
  const userName =
    options.userName ??
    (record.userName as string | undefined) ??
    (ctx.canPrompt()
      ? await promptText(ctx.io, "User name", { validate: await fieldValidator(resources.UserInput, "userName") })
      : undefined);
  if (!userName) throw new UsageError("A user needs a name.", "pass --user-name NAME");
  checkRoles(options.role ?? []);
  if (options.invite && options.passwordStdin) {
    throw new UsageError("--invite and --password-stdin exclude each other: the invited user chooses the password.");
  }
  if (options.invite && !options.email && !Array.isArray(record.emails)) {
    throw new UsageError("An invitation needs an e-mail address.", "pass --email ADDR");
  }
  const secret =
    options.password === false || options.invite
      ? undefined
      : await temporaryPassword(ctx, { passwordStdin: options.passwordStdin, generate: true });
  const { data: user, created } = await createResource(
    ctx,
    {
      ...record,
      resourceType: "User",
      userName,
      ...(options.email && { emails: [{ value: options.email, type: "work", primary: true }] }),
      ...(options.role?.length && { roles: rolesAttribute(options.role) }),
      ...(secret && { password: secret.password }),
    },
    options.ifNotExists,
  );
  // an existing user keeps its password: nothing was set, nothing to show
  if (!created) return ctx.print(user, USER_COLUMNS);
  if (options.invite) {
    // a second request: should it fail, the user exists and 'users invite' sends it again
    await invite.sendInvitation(ctx, { id: String(user.id), userName });
    return ctx.print({ ...user, invited: true }, USER_COLUMNS);
  }
  if (secret?.generated) {
    ctx.info(
      `Its one-time password is in the output below, shown once; ${userName} must change it at the first login.`,
    );
  } else if (!secret) {
    ctx.info(`${userName} has no password yet: send a reset link ('bizctl auth renew-password --user ${userName}').`);
  }
  await ctx.print(secret?.generated ? { ...user, oneTimePassword: secret.password } : user, USER_COLUMNS);
}

function checkRoles(roles: string[]): void {
  for (const role of roles) {
    if (!ROLES.includes(role)) throw new UsageError(`Unknown role '${role}'; roles are ${ROLES.join(", ")}.`);
  }
}

const rolesAttribute = (roles: string[]) => roles.map((value, i) => ({ value, primary: i === 0 }));

async function setPassword(
  ctx: Context,
  reference: string,
  options: { generate?: boolean; passwordStdin?: boolean },
): Promise<void> {
  ctx.requireCredential();
  const { id } = await resolveUser(ctx, reference);
  if (!options.generate && !options.passwordStdin && !ctx.canPrompt()) {
    throw new UsageError("No password given and no terminal to ask on.", "pass --generate or --password-stdin");
  }
  const secret = await temporaryPassword(ctx, {
    passwordStdin: options.passwordStdin,
    generate: options.generate ?? false,
  });
  const user = await updateResource(ctx, id, (current) => ({ ...current, password: secret.password }));
  ctx.info(
    `Temporary password set for ${String(user.userName)}; their sessions were ended and they must change it at the next login.`,
  );
  if (secret.generated) ctx.info("The generated password is in the output below, shown once.");
  await ctx.print(
    secret.generated
      ? { id: user.id, userName: user.userName, oneTimePassword: secret.password }
      : { id: user.id, userName: user.userName },
  );
}

async function setActive(ctx: Context, reference: string, active: boolean): Promise<void> {
  ctx.requireCredential();
  const { id } = await resolveUser(ctx, reference);
  const user = await updateResource(ctx, id, (current) => ({ ...current, active }));
  ctx.info(
    active
      ? `Enabled ${String(user.userName)}.`
      : `Disabled ${String(user.userName)}: logins are refused and their sessions ended.`,
  );
  await ctx.print(user, USER_COLUMNS);
}

export function register(program: Command, io: Context["io"]): void {
  const group = program.command("users").description("shorthands over resources of type User");
  listOptions(group.command("list"))
    .description("list users")
    .addHelpText("after", examples("bizctl users list", "bizctl users list --filter 'active eq false' --json"))
    .action(
      withContext(io, async (ctx, options: ListOptions) => {
        let more: MorePages | undefined;
        const rows = await listResources(ctx, { ...options, type: "User" }, (m) => {
          more = m;
        });
        await ctx.printList(rows, USER_COLUMNS, "users", more);
      }),
    );
  group
    .command("create")
    .description("create a user with a one-time password (shown once)")
    .option("--user-name <name>", "the login name")
    .option("--email <addr>", "work e-mail address")
    .option("--role <role>", "admin, support or member (repeatable; default member)", collect)
    .option("--set <key=value>", "another attribute (repeatable; dotted keys; JSON values)", collect)
    .option("--file <file>", "attributes as JSON or YAML ('-' for stdin)")
    .option("--password-stdin", "read the temporary password from stdin instead of generating one")
    .option("--no-password", "no password: the user sets one through a reset link")
    .option("--invite", "no password: mail an invitation whose link sets the first one (needs --email)")
    .option("--if-not-exists", "a user of that name already there is success: it is printed, unchanged")
    .addHelpText(
      "after",
      examples(
        "bizctl users create --user-name mlee --email mlee@example.com --role member",
        "bizctl users create --user-name asmith --email asmith@example.com --invite",
        'bizctl users create --user-name rkhan --set emails=\'[{"value":"rkhan@example.com","primary":true}]\' --role support',
      ),
    )
    .action(withContext(io, createUser));
  group
    .command("get <user>")
    .description("one user, by id, user name or e-mail")
    .addHelpText("after", examples("bizctl users get admin", "bizctl users get <e-mail> --json"))
    .action(
      withContext(io, async (ctx, reference: string) => {
        ctx.requireCredential();
        const user = await resolveUser(ctx, reference);
        await ctx.print(user);
        // a person at a table gets the user's recent activity under it; data formats stay the user alone
        if (ctx.format() === "table" && ctx.globals.query === undefined && ctx.fields() === undefined) {
          ctx.printText(await recentActivity(ctx, String(user.id)));
        }
      }),
    );
  group
    .command("update <user>")
    .description("change a user's attributes (read, merge, write back with If-Match)")
    .option("--set <key=value>", "an attribute to change (repeatable; dotted keys; JSON values; null clears)", collect)
    .option("--file <file>", "attributes to change as JSON or YAML ('-' for stdin)")
    .addHelpText(
      "after",
      examples("bizctl users update admin --set title=CTO", "bizctl users update <user> --set department=Sales"),
    )
    .action(
      withContext(io, async (ctx, reference: string, options: { set?: string[]; file?: string }) => {
        ctx.requireCredential();
        const changes = await recordFromOptions(ctx.io, options);
        if (Object.keys(changes).length === 0) {
          throw new UsageError("Nothing to change.", "pass --set key=value or --file F");
        }
        const { id } = await resolveUser(ctx, reference);
        const user = await updateResource(ctx, id, (current) => merge(current, changes));
        ctx.info(`Updated ${String(user.userName)}.`);
        await ctx.print(user, USER_COLUMNS);
      }),
    );
  group
    .command("set-roles <user> <roles...>")
    .description("replace a user's roles with these (admin, support, member); admins only")
    .addHelpText(
      "after",
      examples("bizctl users set-roles <user> support", "bizctl users set-roles <user> admin member"),
    )
    .action(
      withContext(io, async (ctx, reference: string, roles: string[]) => {
        ctx.requireCredential();
        checkRoles(roles);
        const { id } = await resolveUser(ctx, reference);
        const user = await updateResource(ctx, id, (current) => ({ ...current, roles: rolesAttribute(roles) }));
        ctx.info(`${String(user.userName)} now holds ${roles.join(", ")}.`);
        await ctx.print(user, USER_COLUMNS);
      }),
    );
  group
    .command("delete <users...>")
    .description("delete users by id, user name or e-mail (asks first; --yes without a terminal)")
    .option("--ignore-not-found", "a user already gone is success")
    .addHelpText("after", examples("bizctl users delete <user> --yes"))
    .action(
      withContext(io, async (ctx, references: string[], options: { ignoreNotFound?: boolean }) => {
        ctx.requireCredential();
        const client = await ctx.client();
        const users = [];
        for (const reference of references) {
          const user = await tolerating(
            "not_found",
            options.ignoreNotFound,
            () => resolveUser(ctx, reference),
            async () => {
              ctx.info(`No user '${reference}'; nothing to delete.`);
              return undefined;
            },
          );
          if (user) users.push(user);
        }
        if (users.length === 0) return;
        await ctx.confirm(`Delete ${users.map((u) => `${u.userName} (${u.id})`).join(", ")}?`);
        for (const user of users) {
          const current = await client.call(resources.getResource, { params: { resourceId: user.id } });
          await client.call(resources.deleteResource, { params: { resourceId: user.id }, ifMatch: current.etag });
          ctx.info(`Deleted ${user.userName}.`);
        }
      }),
    );
  group
    .command("set-password <user>")
    .description(
      "set a temporary password (admin, or support on ordinary users); the user changes it at the next login",
    )
    .option("--generate", "generate a random one and show it once")
    .option("--password-stdin", "read it from stdin")
    .addHelpText(
      "after",
      examples(
        "bizctl users set-password <user> --generate",
        "printf '%s\\n' \"$TEMP\" | bizctl users set-password <user> --password-stdin",
      ),
    )
    .action(withContext(io, setPassword));
  group
    .command("disable <user>")
    .description("set active=false: logins refused, sessions ended")
    .addHelpText("after", examples("bizctl users disable <user>"))
    .action(withContext(io, async (ctx, reference: string) => setActive(ctx, reference, false)));
  group
    .command("enable <user>")
    .description("set active=true again")
    .addHelpText("after", examples("bizctl users enable <user>"))
    .action(withContext(io, async (ctx, reference: string) => setActive(ctx, reference, true)));
  group
    .command("unlock <user>")
    .description("clear the failed-login back-off of a user (admin, or support on ordinary users)")
    .addHelpText("after", examples("bizctl users unlock <user>", "bizctl users unlock <e-mail>"))
    .action(
      withContext(io, async (ctx, reference: string) => {
        ctx.requireCredential();
        const user = await resolveUser(ctx, reference);
        await (await ctx.client()).call(auth.unlock, { params: { employeeId: user.id } });
        ctx.info(
          user.locked
            ? `Unlocked ${user.userName}: it was locked until ${String(user.lockedUntil)} after ${String(user.failedLogins)} failed logins.`
            : `${user.userName} was not locked; its count of failed logins (${String(user.failedLogins ?? 0)}) is back to 0.`,
        );
      }),
    );
  invite.register(group, io);
  importUsers.register(group, io);
  exportUsers.register(group, io);
  sessions.register(group, io);
  signOut.register(group, io);
}
