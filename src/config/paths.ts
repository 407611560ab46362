import { homedir } from "node:os";
import { join } from "node:path";

type Env = Record<string, string | undefined>;

/** `$BIZCTL_CONFIG_DIR`, else the XDG config dir. */
export function configDir(env: Env): string {
  return env.BIZCTL_CONFIG_DIR || join(env.XDG_CONFIG_HOME || join(homedir(), ".config"), "bizctl");
}

/** `$BIZCTL_DATA_DIR`, else the XDG data dir: where the embedded server keeps its database. */
export function defaultDataDir(env: Env): string {
  return env.BIZCTL_DATA_DIR || join(env.XDG_DATA_HOME || join(homedir(), ".local", "share"), "bizctl");
}
