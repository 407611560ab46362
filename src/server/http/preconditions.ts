import { ProblemError } from "../problem-error.js";

export function etagOf(version: number): string {
  return `"${version}"`;
}

/**
 * RFC 9110 If-Match with strong comparison: absent passes, `*` passes for an existing
 * representation, otherwise one of the listed tags must equal the current one.
 */
export function assertIfMatch(header: string | undefined, currentEtag: string): void {
  if (header === undefined) return;
  const tags = header.split(",").map((t) => t.trim());
  if (tags.includes("*") || tags.includes(currentEtag)) return;
  throw new ProblemError(
    "precondition_failed",
    `The resource has changed (its ETag is now ${currentEtag}); read it again and retry.`,
  );
}

/** A conditional write found the record changed since it was read: another writer came first. */
export class ChangedMeanwhile extends ProblemError {
  constructor(what: string, doing: string) {
    super("precondition_failed", `The ${what} changed while it was being ${doing}; read it again and retry.`);
  }
}

/**
 * Runs a read-check-write again when its write lost a race with another writer. With If-Match,
 * the next read finds that the version the client named is gone and answers 412, as asked; without
 * it the client set no precondition, so the write goes onto the newer version (last write wins)
 * rather than a 412 nobody asked for. Each loss means another write succeeded, so a writer loses
 * at most once per other writer of the record at that moment; the bound is above a connection
 * pool's worth of them.
 */
export async function retryWhenChanged<T>(attempt: () => Promise<T>, tries = 16): Promise<T> {
  for (let tried = 1; ; tried++) {
    try {
      return await attempt();
    } catch (error) {
      if (!(error instanceof ChangedMeanwhile) || tried >= tries) throw error;
    }
  }
}
