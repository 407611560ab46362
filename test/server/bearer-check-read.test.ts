import { describe, expect, it } from "vitest";
import { findLiveSession } from "../../src/server/store/sessions-repo.js";
import { STORES } from "../helpers/postgres.js";
import { useTestServer } from "../helpers/server.js";

/**
 * The read every Bearer request makes of its session and owner (issue #46): what the check needs
 * and no more. The password hash and the failure counters are a login's business; each further
 * column is a value made and a property set on every request, which made the authenticated event
 * read measurably slower than the previous release's.
 */

/** A JWT's `jti`, the id of its session. */
const sessionIdOf = (token: string): string =>
  (JSON.parse(Buffer.from(token.split(".")[1]!, "base64url").toString()) as { jti: string }).jti;

describe.each(STORES)("the Bearer check's session read on %s", (_store, start) => {
  const server = useTestServer({}, start);

  it("brings back the session's state and the caller, not its password or counters", async () => {
    const row = await findLiveSession(server.app.services.store.db, sessionIdOf(server.token));
    expect(Object.keys(row ?? {}).sort()).toEqual(
      ["attributes", "first_login", "group_roles", "id", "last_used_at", "mfa_enabled", "revoked_at"].sort(),
    );
    expect(row).toMatchObject({ id: server.admin.id, revoked_at: null });
  });

  it("answers the caller's request as before", async () => {
    const response = await server.call("GET", "/auth/isLogged");
    expect(response.statusCode, response.body).toBe(200);
    expect(response.json()).toMatchObject({ loggedIn: true, user: { id: server.admin.id, roles: ["admin"] } });
  });
});
