import { Value } from "@sinclair/typebox/value";
import type { ImportCounts, ImportFailure } from "../../cli/import-summary.js";
import { changesOf, usersByName } from "../../cli/user-merge.js";
import type { ApiClient } from "../../client/client.js";
import { UserInput } from "../../contract/resources.js";
import type { OnConflict, Pending } from "./import.js";

type Attributes = Record<string, unknown>;

/**
 * `users import --dry-run`: each batch is checked instead of sent. A new user is checked against
 * the User schema the server validates with, a taken userName (in the directory, or earlier in the
 * file) is handled as --on-conflict says, and an update counts only when it would change an
 * attribute. Reads only: nothing is written, no invitation goes out.
 */
export class DryRun {
  /** the users of the file so far, as the import would leave them, by lower-cased userName */
  private readonly inFile = new Map<string, Attributes>();

  constructor(
    private readonly client: ApiClient,
    private readonly onConflict: OnConflict,
    private readonly counts: ImportCounts,
    private readonly failures: ImportFailure[],
    private readonly countUnchanged: () => void,
  ) {}

  async check(sent: Pending[]): Promise<void> {
    const names = sent
      .map((pending) => pending.userName)
      .filter((name): name is string => name !== undefined && !this.inFile.has(name.toLowerCase()));
    const existing = await usersByName(this.client, names);
    for (const pending of sent) {
      const { resourceType: _, ...user } = (pending.operations[0]?.data ?? {}) as Attributes;
      const who = { line: pending.line, ...(pending.userName && { userName: pending.userName }) };
      const key = pending.userName?.toLowerCase();
      const current = key === undefined ? undefined : (this.inFile.get(key) ?? existing.get(key));
      if (!current) {
        const error = Value.Errors(UserInput, user).First();
        if (error) {
          this.failures.push({
            ...who,
            problem: "validation_failed",
            message: `${error.path || "/"}: ${error.message}`,
          });
          continue;
        }
        this.counts.created++;
        if (key !== undefined) this.inFile.set(key, user);
        continue;
      }
      if (this.onConflict === "fail") {
        this.failures.push({ ...who, problem: "conflict", message: `the user name ${pending.userName} is taken` });
      } else if (this.onConflict === "skip") this.counts.skipped++;
      else if (user.passwordHash !== undefined) {
        this.failures.push({
          ...who,
          problem: "validation_failed",
          message: "exists, and an update never replaces a password: leave passwordHash out",
        });
      } else {
        const changes = changesOf(current, user);
        if (changes.length === 0) this.countUnchanged();
        else {
          this.counts.updated++;
          this.inFile.set(key as string, {
            ...current,
            ...Object.fromEntries(changes.map((change) => [change.attribute, change.new])),
          });
        }
      }
    }
  }
}
