import type { Command } from "commander";
import type { Context } from "../../cli/context.js";
import { UsageError } from "../../cli/errors.js";
import { readNewPassword } from "../../cli/passwords.js";
import { promptText } from "../../cli/prompts.js";
import { recordFromOptions } from "../../cli/record-input.js";
import * as auth from "../../contract/auth.js";
import { generatePassword } from "../../contract/passwords.js";
import { createResource } from "../resources/create.js";
import { type ListOptions, listOptions, listResources } from "../resources/list.js";
import { updateResource } from "../resources/update.js";
import { collect, examples, withContext } from "../shared.js";

const USER_COLUMNS = ["id", "userName", "displayName", "active", "roles", "firstLogin"];
const ROLES = ["admin", "support", "member"];

interface CreateOptions {
  userName?: string;
  email?: string;
  role?: string[];
  set?: string[];
  file?: string;
  passwordStdin?: boolean;
  password?: boolean;
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
    (ctx.canPrompt() ? await promptText(ctx.io, "User name") : undefined);
  if (!userName) throw new UsageError("A user needs a name.", "pass --user-name NAME");
  for (const role of options.role ?? []) {
    if (!ROLES.includes(role)) throw new UsageError(`Unknown role '${role}'; roles are ${ROLES.join(", ")}.`);
  }
  const secret =
    options.password === false
      ? undefined
      : await temporaryPassword(ctx, { passwordStdin: options.passwordStdin, generate: true });
  const user = await createResource(ctx, {
    ...record,
    resourceType: "User",
    userName,
    ...(options.email && { emails: [{ value: options.email, type: "work", primary: true }] }),
    ...(options.role?.length && { roles: options.role.map((value, i) => ({ value, primary: i === 0 })) }),
    ...(secret && { password: secret.password }),
  });
  if (secret?.generated) {
    ctx.info(
      `Its one-time password is in the output below, shown once; ${userName} must change it at the first login.`,
    );
  } else if (!secret) {
    ctx.info(`${userName} has no password yet: send a reset link ('bizctl auth renew-password --user ${userName}').`);
  }
  await ctx.print(secret?.generated ? { ...user, oneTimePassword: secret.password } : user, USER_COLUMNS);
}

async function setPassword(
  ctx: Context,
  id: string,
  options: { generate?: boolean; passwordStdin?: boolean },
): Promise<void> {
  ctx.requireCredential();
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

async function setActive(ctx: Context, id: string, active: boolean): Promise<void> {
  ctx.requireCredential();
  const user = await updateResource(ctx, id, (current) => {
    if (current.resourceType !== "User") throw new UsageError(`${id} is not a User.`);
    return { ...current, active };
  });
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
      withContext(io, async (ctx, options: ListOptions) =>
        ctx.print(await listResources(ctx, { ...options, type: "User" }), USER_COLUMNS),
      ),
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
    .addHelpText(
      "after",
      examples(
        "bizctl users create --user-name jdoe --email jdoe@example.com --role member",
        'bizctl users create --user-name jdoe --set emails=\'[{"value":"jdoe@example.com","primary":true}]\' --role support',
      ),
    )
    .action(withContext(io, createUser));
  group
    .command("set-password <id>")
    .description("set a temporary password (admin or support); the user changes it at the next login")
    .option("--generate", "generate a random one and show it once")
    .option("--password-stdin", "read it from stdin")
    .addHelpText(
      "after",
      examples(
        "bizctl users set-password 2819c223 --generate",
        "printf '%s\\n' \"$TEMP\" | bizctl users set-password 2819c223 --password-stdin",
      ),
    )
    .action(withContext(io, setPassword));
  group
    .command("disable <id>")
    .description("set active=false: logins refused, sessions ended")
    .addHelpText("after", examples("bizctl users disable 2819c223"))
    .action(withContext(io, async (ctx, id: string) => setActive(ctx, id, false)));
  group
    .command("unlock <id>")
    .description("clear the failed-login back-off of a user (admin or support)")
    .addHelpText("after", examples("bizctl users unlock 2819c223"))
    .action(
      withContext(io, async (ctx, id: string) => {
        ctx.requireCredential();
        await (await ctx.client()).call(auth.unlock, { params: { employeeId: id } });
        ctx.info(`Unlocked ${id}.`);
      }),
    );
  group
    .command("enable <id>")
    .description("set active=true again")
    .action(withContext(io, async (ctx, id: string) => setActive(ctx, id, true)));
}
