import type { Static } from "@sinclair/typebox";
import type { Command } from "commander";
import type { Context } from "../../cli/command-context.js";
import { CliError } from "../../cli/errors.js";
import { callerMay } from "../../cli/permissions.js";
import * as deletedUsers from "../../contract/deleted-users.js";
import * as diagnosis from "../../contract/diagnosis.js";
import { examples, forPerson, withContext } from "../verb-helpers.js";
import { resolveUser } from "./resolve.js";

type Reason = Static<typeof diagnosis.DiagnosisReason>;
/** The server's diagnosis, or the CLI's of a deleted user: its one reason `deleted` is not a login check's. */
type Diagnosis = Omit<Static<typeof diagnosis.Diagnosis>, "reasons"> & {
  reasons: (Omit<Reason, "code"> & { code: Reason["code"] | "deleted" })[];
};
type DeletedUser = Static<typeof deletedUsers.DeletedUser>;

const EFFECT_WORDS = { refused: "refused", restricted: "restricted", notice: "notice" } as const;

/** The diagnosis as a person reads it: the reasons in login order, each with its dates and its fix. */
export function diagnosisStory(found: Diagnosis): string {
  const who = `${found.userName} (${found.id})`;
  if (found.healthy) {
    return `${who} can sign in: none of the login's ${found.checks.length} checks finds anything.\n`;
  }
  const refusing = found.reasons.filter((reason) => reason.effect === "refused").length;
  const head =
    refusing > 0
      ? `${who} cannot sign in now. In the order a login meets them:`
      : `${who} can sign in, but in the order a login meets them:`;
  const lines = [head, ""];
  for (const [i, reason] of found.reasons.entries()) {
    lines.push(`${i + 1}. ${reason.code} (${EFFECT_WORDS[reason.effect]}): ${reason.meaning}`);
    const dates = [reason.since && `since ${reason.since}`, reason.until && `until ${reason.until}`].filter(Boolean);
    if (dates.length > 0) lines.push(`   ${dates.join(", ")}`);
    const fix = reason.fix;
    if (fix?.by === "caller") lines.push(`   fix: ${fix.command} (${fix.text})`);
    else if (fix?.by === "user") lines.push(`   the user: ${fix.command} (${fix.text.replace(/^the user /, "")})`);
    else if (fix) lines.push(`   fix: ${fix.text}`);
  }
  return `${lines.join("\n")}\n`;
}

/**
 * A deleted user answers 404 to every read but the deleted list (spec 1.10), so no login check
 * meets it: the diagnosis of one the server keeps for a restore names `deleted`, with the restore.
 */
export function deletedDiagnosis(user: DeletedUser, checkedAt: string): Diagnosis {
  return {
    id: user.id,
    userName: user.userName,
    healthy: false,
    checkedAt,
    reasons: [
      {
        code: "deleted",
        effect: "refused",
        check: "deleted",
        meaning: "the user was deleted; it is kept for a restore until it is purged",
        since: user.deletedAt,
        until: user.purgeAfter,
        fix: {
          by: "caller",
          command: `bizctl users restore ${user.userName}`,
          operation: "users:delete",
          text: "bring it back with its attributes, roles and groups",
        },
      },
    ],
    checks: [],
    notChecked: [],
  };
}

/**
 * The user `reference` names; one not found is looked for among the deleted users, by a caller
 * who may list them (the same call as `users deleted`). Others get the plain not-found.
 */
async function findForDiagnosis(ctx: Context, reference: string) {
  try {
    return { user: await resolveUser(ctx, reference) };
  } catch (error) {
    if (!(error instanceof CliError) || error.code !== "not_found" || !(await callerMay(ctx, "users:delete")))
      throw error;
    // a token whose scopes leave out the deleted list gets the not-found it would have had
    const kept = await (await ctx.client()).call(deletedUsers.listDeletedUsers).catch((refused: unknown) => {
      if (refused instanceof CliError && refused.exitCode === 5) return undefined;
      throw refused;
    });
    if (!kept) throw error;
    const { data } = kept;
    const wanted = reference.normalize("NFC").toLowerCase();
    const deleted = data.Resources.find(
      (user) => user.id === reference || user.userName.normalize("NFC").toLowerCase() === wanted,
    );
    if (!deleted) throw error;
    return { deleted };
  }
}

export function register(group: Command, io: Context["io"]): void {
  group
    .command("diagnose <user>")
    .description(
      "every reason a user cannot sign in or act now, in login order, with the fix you may run (admin and support)",
    )
    .addHelpText("after", examples("bizctl users diagnose <user>", "bizctl users diagnose <e-mail> --json"))
    .action(
      withContext(io, async (ctx, reference: string) => {
        ctx.requireCredential();
        const { user, deleted } = await findForDiagnosis(ctx, reference);
        const data = deleted
          ? deletedDiagnosis(deleted, new Date().toISOString())
          : (await (await ctx.client()).call(diagnosis.diagnoseUser, { params: { id: String(user.id) } })).data;
        if (forPerson(ctx)) ctx.printText(diagnosisStory(data));
        else await ctx.print(data);
      }),
    );
}
