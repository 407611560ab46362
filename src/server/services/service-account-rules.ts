import { ProblemError } from "../problem-error.js";

/**
 * The refusal of anything a person does with a password, for a service account (spec 1.9): it
 * has no password, no second factor and no login, and acts only through its API tokens.
 */
export function serviceAccountRefusal(userName: string, what: string): ProblemError {
  return new ProblemError(
    "service_account",
    `${userName} is a service account: it cannot ${what}. It has no password, no second factor and no login, and acts only through API tokens an admin creates for it (bizctl service-accounts token-create ${userName}).`,
  );
}
