import { EMBEDDED, type Profile } from "../../config/profiles.js";

/** A profile as `profile list` and `profile show` print it: its server, and who is logged in until when. */
export function describe(name: string, profile: Profile, current: string) {
  return {
    name,
    current: name === current,
    server: profile.server,
    ...(profile.server === EMBEDDED && profile.dataDir && { dataDir: profile.dataDir }),
    user: profile.auth?.user.userName ?? null,
    expiresAt: profile.auth?.expiresAt ?? null,
  };
}
