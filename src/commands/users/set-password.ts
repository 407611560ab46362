import type { Command } from "commander";
import type { Context } from "../../cli/command-context.js";
import { UsageError } from "../../cli/errors.js";
import { refuseBeforeAsking } from "../../cli/permissions.js";
import { updateResource } from "../resource-calls.js";
import { examples, withContext } from "../verb-helpers.js";
import { resolveUser, rolesOf } from "./resolve.js";
import { temporaryPassword } from "./temporary-password.js";

async function setPassword(
  ctx: Context,
  reference: string,
  options: { generate?: boolean; passwordStdin?: boolean },
): Promise<void> {
  ctx.requireCredential();
  const target = await resolveUser(ctx, reference);
  const { id } = target;
  if (!options.generate && !options.passwordStdin && !ctx.canPrompt()) {
    throw new UsageError("No password given and no terminal to ask on.", "pass --generate or --password-stdin");
  }
  if (!options.generate && !options.passwordStdin) {
    // before the password is typed twice: support helps ordinary users only (the server's rule)
    await refuseBeforeAsking(ctx, "users:set-password", { id, roles: rolesOf(target) }, { about: target.userName });
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

export function register(group: Command, io: Context["io"]): void {
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
}
