import type { Static } from "@sinclair/typebox";
import type { Command } from "commander";
import type { Context } from "../../cli/command-context.js";
import * as diagnosis from "../../contract/diagnosis.js";
import { examples, forPerson, withContext } from "../verb-helpers.js";
import { resolveUser } from "./resolve.js";

type Diagnosis = Static<typeof diagnosis.Diagnosis>;

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
        const user = await resolveUser(ctx, reference);
        const { data } = await (await ctx.client()).call(diagnosis.diagnoseUser, { params: { id: String(user.id) } });
        if (forPerson(ctx)) ctx.printText(diagnosisStory(data));
        else await ctx.print(data);
      }),
    );
}
