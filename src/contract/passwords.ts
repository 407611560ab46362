/**
 * A one-time password: 20 characters from an alphabet without look-alikes (about 116 bits).
 * Shared by `server init` and the CLI's `--generate`, which must produce the same kind.
 */
export function generatePassword(): string {
  const alphabet = "abcdefghijkmnopqrstuvwxyzABCDEFGHJKLMNPQRSTUVWXYZ23456789";
  const limit = 256 - (256 % alphabet.length);
  const out: string[] = [];
  while (out.length < 20) {
    for (const byte of crypto.getRandomValues(new Uint8Array(32))) {
      // rejection sampling keeps every character equally likely
      if (byte < limit && out.length < 20) out.push(alphabet[byte % alphabet.length] as string);
    }
  }
  return out.join("");
}

/** The server's default minimum length of a password, in characters (`passwordMinLength`). */
export const DEFAULT_PASSWORD_MIN_LENGTH = 15;

/**
 * The rules of a new password (the server's assertAcceptablePassword), said before one is typed:
 * a person should not learn them one refusal at a time.
 */
export const PASSWORD_RULES = `A password needs at least ${DEFAULT_PASSWORD_MIN_LENGTH} characters (unless the server asks for more); a phrase of a few words is easiest. Common passwords, repetitions, the user name and the current password are refused.`;

/** The longest password accepted, in code points after NFC. */
export const MAX_PASSWORD_LENGTH = 1024;

function isRepetition(password: string): boolean {
  for (let unit = 1; unit <= 4; unit++) {
    const head = password.slice(0, unit);
    if (head.repeat(Math.ceil(password.length / unit)).slice(0, password.length) === password) return true;
  }
  return false;
}

/**
 * Why a new password is refused by the rules that need no dictionary and no stored hash (length in
 * code points after NFC, a repetition, the user name), or undefined. The server checks these and
 * more; the CLI checks them at the first entry, before asking for the password again.
 */
export function passwordShapeProblem(
  password: string,
  context: { minLength: number; userName?: string },
): string | undefined {
  const normalized = password.normalize("NFC");
  const length = [...normalized].length;
  if (length < context.minLength)
    return `The password must have at least ${context.minLength} characters (it has ${length}).`;
  if (length > MAX_PASSWORD_LENGTH) return `The password must have at most ${MAX_PASSWORD_LENGTH} characters.`;
  if (isRepetition(normalized)) return "The password is a repetition of a few characters.";
  const { userName } = context;
  if (userName && userName.length >= 3 && normalized.toLowerCase().includes(userName.toLowerCase())) {
    return "The password must not contain the user name.";
  }
  return undefined;
}
