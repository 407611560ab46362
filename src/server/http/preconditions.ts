import { ProblemError } from "../problem-error.js";

export function etagOf(version: number): string {
  return `"${version}"`;
}

/** The conditions a write is made under: the request's If-Match and If-None-Match. */
export interface Preconditions {
  ifMatch?: string;
  ifNoneMatch?: string;
}

/** The preconditions of a request's headers. */
export function preconditionsOf(headers: { "if-match"?: string; "if-none-match"?: string }): Preconditions {
  return { ifMatch: headers["if-match"], ifNoneMatch: headers["if-none-match"] };
}

/** An entity tag without its weakness: If-None-Match compares weakly (RFC 9110 section 13.1.2). */
const opaque = (tag: string) => (tag.startsWith("W/") ? tag.slice(2) : tag);

/** Whether an If-None-Match value names the current tag: `*`, or a list holding it. */
export function noneMatchHits(header: string, currentEtag: string): boolean {
  const current = opaque(currentEtag);
  return header.split(",").some((tag) => {
    const trimmed = tag.trim();
    return trimmed === "*" || opaque(trimmed) === current;
  });
}

/**
 * RFC 9110 section 13.2.2, for a write to an existing representation. If-Match compares strongly:
 * `*` or one of the listed tags must be the current one. If-None-Match then must name neither
 * `*` nor the current tag: a client that sends `If-None-Match: *` means "only if there is none",
 * so an existing record is not overwritten. Either failing is 412.
 */
export function assertPreconditions(preconditions: Preconditions | undefined, currentEtag: string): void {
  const { ifMatch, ifNoneMatch } = preconditions ?? {};
  if (ifMatch !== undefined) {
    const tags = ifMatch.split(",").map((t) => t.trim());
    if (!tags.includes("*") && !tags.includes(currentEtag)) {
      throw new ProblemError(
        "precondition_failed",
        `The resource has changed (its ETag is now ${currentEtag}); read it again and retry.`,
      );
    }
  }
  if (ifNoneMatch !== undefined && noneMatchHits(ifNoneMatch, currentEtag)) {
    throw new ProblemError(
      "precondition_failed",
      `The resource exists (its ETag is ${currentEtag}) and If-None-Match asked that it not; nothing was changed.`,
    );
  }
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
