import { UsageError } from "./errors.js";

type Attributes = Record<string, unknown>;

/** Applies `--map OLD=NEW` to a header. */
export function renameColumns(columns: string[], renames: Map<string, string>): string[] {
  return columns.map((column) => renames.get(column) ?? column);
}

/** `--map OLD=NEW`, each OLD once: a column mapped twice is refused (exit 2), as is a target given twice. */
export function parseRenames(pairs: string[]): Map<string, string> {
  const renames = new Map<string, string>();
  const targets = new Map<string, string>();
  for (const pair of pairs) {
    const at = pair.indexOf("=");
    if (at <= 0 || at === pair.length - 1) throw new UsageError(`--map takes OLD=NEW (got '${pair}').`);
    const [from, to] = [pair.slice(0, at), pair.slice(at + 1)];
    if (renames.has(from)) throw new UsageError(`--map maps the column '${from}' twice: map it once.`);
    const earlier = targets.get(to.toLowerCase());
    if (earlier !== undefined)
      throw new UsageError(`--map maps both '${earlier}' and '${from}' to ${to}: map one column to it.`);
    renames.set(from, to);
    targets.set(to.toLowerCase(), from);
  }
  return renames;
}

/** A User without a userName takes its first e-mail address as one, when the file has no user-name column. */
export function userNameFromEmail(user: Attributes): Attributes {
  if (user.userName !== undefined) return user;
  const emails = Array.isArray(user.emails) ? (user.emails as { value?: unknown }[]) : [];
  const address = emails.find((email) => typeof email?.value === "string")?.value;
  return address === undefined ? user : { userName: address, ...user };
}
