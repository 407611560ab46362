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
