import { EMBEDDED, type Profile } from "../../config/profiles.js";

/** Whether the profile's stored session still works, by its expiry (the server may have ended it sooner). */
function sessionOf(profile: Profile, now: number): "active" | "expired" | "none" {
  if (!profile.auth) return "none";
  return Date.parse(profile.auth.expiresAt) <= now ? "expired" : "active";
}

/** A profile as `profile list` and `profile show` print it: its server, and who is logged in until when. */
export function describe(name: string, profile: Profile, current: string, now = Date.now()) {
  return {
    name,
    current: name === current,
    server: profile.server,
    ...(profile.server === EMBEDDED && profile.dataDir && { dataDir: profile.dataDir }),
    user: profile.auth?.user.userName ?? null,
    session: sessionOf(profile, now),
    expiresAt: profile.auth?.expiresAt ?? null,
  };
}
