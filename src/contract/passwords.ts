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
