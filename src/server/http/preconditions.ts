import { ProblemError } from "../problems.js";

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
