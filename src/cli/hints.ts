/**
 * The commands a hint or message tells a person to run, with the profile in use.
 *
 * A hint is copied into the next command line, maybe in another shell. When the command at hand
 * acts on a profile chosen by `--profile` or `BIZCTL_PROFILE`, a bare `bizctl auth login` would
 * act on the current profile instead, and so on another server: every command a hint names
 * carries `--profile NAME` then.
 */

/** The profile this command line chose itself (flag, then environment); undefined for the current one. */
export function chosenProfile(flag: string | undefined, env: Record<string, string | undefined>): string | undefined {
  return flag || env.BIZCTL_PROFILE || undefined;
}

/** The `--profile` of a raw command line, for an error reported before any command ran. */
export function profileFlag(argv: string[]): string | undefined {
  let found: string | undefined;
  argv.forEach((arg, i) => {
    if (arg === "--profile") found = argv[i + 1];
    else if (arg.startsWith("--profile=")) found = arg.slice("--profile=".length);
  });
  return found;
}

/** A word a shell reads as itself: a profile name is quoted when it holds anything else. */
export const shellWord = (word: string) => (/^[\w.@%+=:,/-]+$/.test(word) ? word : `'${word.replace(/'/g, "'\\''")}'`);

/**
 * `bizctl` commands named in the text (`'bizctl auth login'`, `Resume with: bizctl audit tail …`),
 * each with `--profile NAME` when a profile was chosen. Commands that name their own profile or
 * work on profiles, local data or the shell (`profile`, `server`, `completion`) are left alone,
 * but for a bare `profile show`, which is given the name.
 */
export function scoped(text: string, profile: string | undefined): string {
  if (!profile) return text;
  return (
    text
      .replace(
        /\bbizctl (?!--profile|profile |server |completion )(?=[a-z])/g,
        `bizctl --profile ${shellWord(profile)} `,
      )
      // without a name it shows the current profile, not the one chosen
      .replace(/\bbizctl profile show(?=['"]|$)/gm, `bizctl profile show ${shellWord(profile)}`)
  );
}
