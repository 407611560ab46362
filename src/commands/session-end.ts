import { describeError } from "../cli/errors.js";
import type { ApiClient } from "../client/client.js";
import { ApiError } from "../client/errors.js";
import * as auth from "../contract/auth.js";

/** What became of a token's session on the server: ended, or why it may still be live. */
export type SessionEnd = { ended: true } | { ended: false; why: string };

/**
 * Ends on its server the session of a token this machine forgets (an API token is revoked),
 * best effort: a 401 means it had ended already; anything else (the server unreachable) is
 * answered, for the caller to say that the session may still be live.
 */
export async function endSession(client: ApiClient, token: string): Promise<SessionEnd> {
  try {
    await client.call(auth.logout, { headers: { authorization: `Bearer ${token}` } });
    return { ended: true };
  } catch (error) {
    if (error instanceof ApiError && error.status === 401) return { ended: true };
    return { ended: false, why: describeError(error).message };
  }
}
