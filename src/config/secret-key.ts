import { readFileSync } from "node:fs";

/**
 * The deployment secret that seals the signing keys: a file's content (`--secret-key-file` or
 * BIZCTL_SECRET_KEY_FILE), else BIZCTL_SECRET_KEY. The server checks its form.
 */
export function resolveSecretKey(
  file: string | undefined,
  env: Record<string, string | undefined>,
): { secretKey?: string; error?: string } {
  if (file === undefined) return { secretKey: env.BIZCTL_SECRET_KEY || undefined };
  try {
    return { secretKey: readFileSync(file, "utf8") };
  } catch (error) {
    return { error: `Cannot read the secret key file ${file}: ${(error as NodeJS.ErrnoException).code ?? error}.` };
  }
}
