import type { Command } from "commander";
import type { Context } from "../../cli/command-context.js";
import { UsageError } from "../../cli/errors.js";
import { promptText } from "../../cli/prompts.js";
import { fieldValidator, recordFromOptions } from "../../cli/record-input.js";
import * as resources from "../../contract/resources.js";
import { createResource } from "../resource-calls.js";
import { collect, examples, withContext } from "../verb-helpers.js";
import * as invite from "./invite.js";
import { checkRoles, rolesAttribute } from "./roles.js";
import { printUser } from "./summary.js";
import { temporaryPassword } from "./temporary-password.js";

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
  if (!created) return printUser(ctx, user);
  if (options.invite) {
    // a second request: should it fail, the user exists and 'users invite' sends it again
    await invite.sendInvitation(ctx, { id: String(user.id), userName });
    return printUser(ctx, user, { invited: true });
  }
  if (secret?.generated) {
    ctx.info(
      `Its one-time password is in the output below, shown once; ${userName} must change it at the first login.`,
    );
  } else if (!secret) {
    ctx.info(`${userName} has no password yet: send a reset link ('bizctl auth renew-password --user ${userName}').`);
  }
  await printUser(ctx, user, secret?.generated ? { oneTimePassword: secret.password } : {});
}

export function register(group: Command, io: Context["io"]): void {
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
}
