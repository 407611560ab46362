import type { Context } from "../../cli/command-context.js";

/** Who a login stored in the profile, printed for a script (piped, or asked for with --json/-o). */
export async function printLoginResult(
  ctx: Context,
  server: string,
  data: { user: { userName: string; id: string; roles: string[] }; expiresAt: string },
  extra: Record<string, unknown>,
): Promise<void> {
  if (ctx.io.stdout.isTTY && !ctx.globals.json && !ctx.globals.output) return;
  await ctx.print({
    profile: ctx.profileName,
    server,
    user: data.user.userName,
    userId: data.user.id,
    roles: data.user.roles,
    expiresAt: data.expiresAt,
    ...extra,
  });
}
