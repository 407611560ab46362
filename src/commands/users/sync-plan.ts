import { Value } from "@sinclair/typebox/value";
import type { ImportFailure } from "../../cli/import-summary.js";
import { type AttributeChange, changesOf, versionOf } from "../../cli/user-merge.js";
import type { UserLine } from "../../cli/user-records.js";
import { UserInput } from "../../contract/resources.js";

type Attributes = Record<string, unknown>;

/** What `users sync --plan` writes and `--apply` carries out, whole: nothing is looked up again but the versions. */
export interface SyncPlan {
  plan: "bizctl users sync";
  version: 1;
  source: string;
  /** the SHA-256 of the file the plan was made from: --apply refuses another */
  fileSha256: string;
  madeAt: string;
  read: number;
  creates: { line: number; userName: string; user: Attributes }[];
  updates: { line: number; id: string; userName: string; version?: string; changes: AttributeChange[] }[];
  deactivations: { id: string; userName: string; version?: string }[];
  deletions: { id: string; userName: string; version?: string; inactiveSince: string }[];
  unchanged: number;
  failures: ImportFailure[];
  /** why nothing is deactivated or deleted this run, when so */
  leaversHeld?: string;
}

export interface PlanOptions {
  source: string;
  fileSha256: string;
  deleteMissingAfterDays?: number;
  now?: Date;
}

const DAY_MS = 86_400_000;

/**
 * The plan that makes the directory match the file for the users of `source`: the new are
 * created (kept as of the source), the listed merged (only the file's attributes; a hand-made
 * User the file lists is adopted; an inactive one, a returner, is reactivated unless the file has
 * an active column), the source's users the file no longer
 * lists deactivated, or deleted once inactive that many days. A User of another source is never
 * touched; one the file leaves as it is, never written.
 */
export function makePlan(lines: UserLine[], directory: Attributes[], options: PlanOptions): SyncPlan {
  const now = options.now ?? new Date();
  const byName = new Map(directory.map((user) => [String(user.userName).toLowerCase(), user]));
  const plan: SyncPlan = {
    plan: "bizctl users sync",
    version: 1,
    source: options.source,
    fileSha256: options.fileSha256,
    madeAt: now.toISOString(),
    read: lines.length,
    creates: [],
    updates: [],
    deactivations: [],
    deletions: [],
    unchanged: 0,
    failures: [],
  };
  const listed = new Map<string, number>();
  let unnamed = 0;
  for (const entry of lines) {
    if ("error" in entry) {
      if (entry.userName) listed.set(entry.userName.toLowerCase(), entry.line);
      else unnamed++;
      plan.failures.push({
        line: entry.line,
        ...(entry.userName && { userName: entry.userName }),
        problem: "invalid_line",
        message: entry.error,
      });
      continue;
    }
    const { passwordHash, ...user } = entry.user;
    const userName = typeof user.userName === "string" ? user.userName : undefined;
    const fail = (problem: string, message: string) =>
      plan.failures.push({ line: entry.line, ...(userName && { userName }), problem, message });
    if (!userName) {
      unnamed++;
      fail("invalid_line", "has no userName (nor an e-mail address to take as one)");
      continue;
    }
    const key = userName.toLowerCase();
    const earlier = listed.get(key);
    if (earlier !== undefined) {
      fail("conflict", `lists ${userName} again (line ${earlier}): the first line holds`);
      continue;
    }
    listed.set(key, entry.line);
    const current = byName.get(key);
    if (!current) {
      const created = { ...user, ...(passwordHash !== undefined && { passwordHash }), syncSource: options.source };
      const error = Value.Errors(UserInput, created).First();
      if (error) fail("validation_failed", `${error.path || "/"}: ${error.message}`);
      else plan.creates.push({ line: entry.line, userName, user: created });
      continue;
    }
    const owner = current.syncSource;
    if (owner !== undefined && owner !== options.source) {
      fail("conflict", `belongs to the source '${String(owner)}': a sync changes the users of its own source only`);
      continue;
    }
    // a listed user is active unless the file says otherwise: a returner (a leaver this source
    // deactivated) is reactivated, and so is an inactive user it adopts, or the next run would
    const returner = !("active" in user) && current.active === false;
    const given = { ...user, syncSource: options.source, ...(returner && { active: true }) };
    const changes = changesOf(current, given);
    if (changes.length === 0) plan.unchanged++;
    else {
      const version = versionOf(current);
      plan.updates.push({
        line: entry.line,
        id: String(current.id),
        userName: String(current.userName),
        ...(version && { version }),
        changes,
      });
    }
  }
  if (unnamed > 0) {
    plan.leaversHeld = `${unnamed} line(s) name no user: which users the file lists is unknown, so no user is deactivated or deleted this run`;
  } else if (listed.size === 0) {
    plan.leaversHeld = "the file lists no users: a sync deactivates no one on an empty file";
  }
  for (const user of directory) {
    if (plan.leaversHeld || user.syncSource !== options.source) continue;
    if (listed.has(String(user.userName).toLowerCase())) continue;
    const version = versionOf(user);
    const who = { id: String(user.id), userName: String(user.userName), ...(version && { version }) };
    if (user.active !== false) {
      plan.deactivations.push(who);
      continue;
    }
    const since = String((user.meta as { lastModified?: string } | undefined)?.lastModified ?? "");
    const days = options.deleteMissingAfterDays;
    if (days !== undefined && since && now.getTime() - Date.parse(since) >= days * DAY_MS) {
      plan.deletions.push({ ...who, inactiveSince: since });
    }
  }
  return plan;
}

/** A value as one short cell of the plan's table. */
function cell(value: unknown): string {
  if (value === undefined) return "";
  const text = typeof value === "string" ? value : JSON.stringify(value);
  return text.length > 80 ? `${text.slice(0, 77)}...` : text;
}

/** The plan as rows: one a create, deactivation or deletion, one per attribute of an update. */
export function planRows(plan: SyncPlan): Attributes[] {
  return [
    ...plan.creates.map((create) => ({ action: "create", userName: create.userName, line: create.line })),
    ...plan.updates.flatMap((update) =>
      update.changes.map((change) => ({
        action: "update",
        userName: update.userName,
        line: update.line,
        attribute: change.attribute,
        old: cell(change.old),
        new: cell(change.new),
      })),
    ),
    ...plan.deactivations.map((leaver) => ({ action: "deactivate", userName: leaver.userName })),
    ...plan.deletions.map((leaver) => ({ action: "delete", userName: leaver.userName, old: leaver.inactiveSince })),
  ];
}

export const PLAN_COLUMNS = ["action", "userName", "line", "attribute", "old", "new"];

/** "Plan for source hr: 2 to create, 1 to update, 1 to deactivate, 0 to delete, 7 unchanged, 0 failed, of 10 read." */
export function planLine(plan: SyncPlan): string {
  return `Plan for source ${plan.source}: ${plan.creates.length} to create, ${plan.updates.length} to update, ${plan.deactivations.length} to deactivate, ${plan.deletions.length} to delete, ${plan.unchanged} unchanged, ${plan.failures.length} failed, of ${plan.read} read.`;
}
