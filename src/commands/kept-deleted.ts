import { CliError, EXIT } from "../cli/errors.js";

// The users and groups a server keeps after a delete (`server start --retain-deleted`): a person
// names one by its id or its name, in any case, among the deleted ones only, since every other
// read answers 404 for it.

/** The kept deleted user or group that `reference` names, or exit 3 with the command that lists them. */
export function findKept<T extends { id: string }>(
  kept: readonly T[],
  reference: string,
  nameOf: (one: T) => string,
  noun: "user" | "group",
): T {
  const wanted = reference.normalize("NFC").toLowerCase();
  const found =
    kept.find((one) => one.id === reference) ??
    kept.find((one) => nameOf(one).normalize("NFC").toLowerCase() === wanted);
  if (!found) {
    throw new CliError(
      `No deleted ${noun} '${reference}' (bizctl ${noun}s deleted lists them).`,
      EXIT.notFound,
      "not_found",
    );
  }
  return found;
}
