import { ProblemError } from "../problem-error.js";
import { authenticateBearer } from "./accounts.js";
import type { Principal, ServiceContext } from "./service-context.js";

const REALM = 'Bearer realm="bizctl"';

/** A request that brought no token: RFC 6750 section 3.1 says no error code then. */
export const NO_TOKEN_CHALLENGE = { "www-authenticate": REALM };

/** RFC 6750's error_description allows printable ASCII but `"` and `\`; the rest becomes a space. */
const quotable = (text: string) => text.replace(/[^\x20\x21\x23-\x5b\x5d-\x7e]/g, " ");

/** The challenge of a refused token (malformed, expired, revoked, unknown key): `error="invalid_token"` and why. */
export function refusedTokenChallenge(why: string): Record<string, string> {
  return { "www-authenticate": `${REALM}, error="invalid_token", error_description="${quotable(why)}"` };
}

/** A token refusal as a ProblemError whose answer carries the refused-token challenge. */
export function refusedToken(code: "token_invalid" | "token_expired" | "token_revoked", detail: string): ProblemError {
  return new ProblemError(code, detail, { headers: refusedTokenChallenge(detail) });
}

/** authenticateBearer, whose 401 answers carry the refused-token challenge. */
export async function authenticateChallenged(ctx: ServiceContext, token: string): Promise<Principal> {
  try {
    return await authenticateBearer(ctx, token);
  } catch (error) {
    if (error instanceof ProblemError && error.status === 401) {
      throw new ProblemError(error.code, error.detail, {
        ...error.extra,
        headers: refusedTokenChallenge(error.detail),
      });
    }
    throw error;
  }
}
