import { chmodSync, closeSync, lstatSync, openSync, readdirSync } from "node:fs";
import { join } from "node:path";

/**
 * The data dir holds the database, its WAL, the signing keys, the outbox's mail (reset links)
 * and the names that failed to log in: none of it is for other local users. What the server
 * creates it creates owner-only (directories 0700, files 0600, whatever the umask); this also
 * makes a data dir made by an older version, or by hand, owner-only, and says what it changed.
 */
const DIRECTORY = 0o700;
const FILE = 0o600;

/**
 * What the server keeps in the data dir; the directories among them are its own, and all they
 * hold. Nothing else is walked: a data dir given as a home or a shared directory is made
 * owner-only itself, but the files of others in it are left alone.
 */
const OWN = ["bizctl.db", "bizctl.db-wal", "bizctl.db-shm", "login-names.json", "keys", "outbox"];

/** Drops the group and other bits of `path`, and with `deep` of all it holds (never following a symlink). */
function tighten(path: string, changed: string[], deep: boolean): void {
  let stat: ReturnType<typeof lstatSync>;
  try {
    stat = lstatSync(path);
  } catch {
    return;
  }
  if (stat.isSymbolicLink()) return;
  if ((stat.mode & 0o077) !== 0) {
    try {
      chmodSync(path, stat.isDirectory() ? DIRECTORY : stat.mode & FILE);
      changed.push(path);
    } catch (error) {
      // not the server user's: said, not fatal
      changed.push(`${path} (could not: ${(error as NodeJS.ErrnoException).code})`);
    }
  }
  if (deep && stat.isDirectory()) for (const entry of readdirSync(path)) tighten(join(path, entry), changed, true);
}

/**
 * Makes the data dir and what the server keeps in it, and a SQLite file elsewhere with its
 * `-wal` and `-shm`, owner-only; answers the paths other users could read. A file SQLite creates
 * follows the umask, and its `-wal` and `-shm` take the database file's mode: so the database
 * file is created here first, 0600, when `create` asks for it.
 */
export function ownerOnly(dataDir: string, sqliteFile: string | undefined, create: boolean): string[] {
  const changed: string[] = [];
  tighten(dataDir, changed, false);
  for (const entry of OWN) tighten(join(dataDir, entry), changed, true);
  if (sqliteFile) {
    if (create) closeSync(openSync(sqliteFile, "a", FILE));
    for (const file of [sqliteFile, `${sqliteFile}-wal`, `${sqliteFile}-shm`]) {
      if (!changed.includes(file)) tighten(file, changed, false);
    }
  }
  return changed;
}
