import type argon2Module from "argon2";
import { passwordShapeProblem } from "../../contract/passwords.js";
import { ProblemError } from "../problem-error.js";

type Argon2 = typeof argon2Module;

/** argon2's own `argon2id` (a test checks it): the module itself is loaded with the first hash. */
const ARGON2ID = 2 satisfies Argon2["argon2id"];

/** OWASP's minimum for argon2id: m=19 MiB, t=2, p=1. */
export const HASH_OPTIONS = { type: ARGON2ID, memoryCost: 19 * 1024, timeCost: 2, parallelism: 1 } as const;

export interface PasswordPolicy {
  minLength: number;
}

let argon2: Argon2 | undefined;

/**
 * The native addon is loaded by the first request that hashes or verifies a password, not by
 * every embedded command: most read and write no password.
 */
async function loadArgon2(): Promise<Argon2> {
  argon2 ??= (await import("argon2")).default;
  return argon2;
}

let commonPasswords: Set<string> | undefined;

async function loadCommonPasswords(): Promise<Set<string>> {
  if (!commonPasswords) {
    const language = await import("@zxcvbn-ts/language-common");
    // the package is CommonJS: bundled, its exports arrive under `default`
    const dictionary = language.dictionary ?? (language as unknown as { default: typeof language }).default.dictionary;
    commonPasswords = new Set((dictionary["passwords-common"] as string[]).map((p) => p.toLowerCase()));
  }
  return commonPasswords;
}

/** NFC so that the same characters typed on two keyboards hash alike (NIST SP 800-63B). */
export function normalizePassword(password: string): string {
  return password.normalize("NFC");
}

export async function hashPassword(password: string): Promise<string> {
  return (await loadArgon2()).hash(normalizePassword(password), HASH_OPTIONS);
}

/** A bcrypt hash in modular crypt format ($2a$, $2b$, $2y$), as other systems export them. */
const BCRYPT = /^\$2[aby]\$(0[4-9]|[12][0-9]|3[01])\$[./A-Za-z0-9]{53}$/;
/** An argon2id hash in PHC string format (its parameters in any order: node-argon2 writes m,p,t). */
const ARGON2ID_HASH =
  /^\$argon2id\$v=19\$[mtp]=[0-9]{1,10}(,[mtp]=[0-9]{1,10}){2}\$[A-Za-z0-9+/]{11,}\$[A-Za-z0-9+/]{16,}$/;

/** Whether a hash imported from another system is one this server can verify (bcrypt or argon2id). */
export function isImportableHash(hash: string): boolean {
  return BCRYPT.test(hash) || ARGON2ID_HASH.test(hash);
}

export async function verifyPassword(hash: string, password: string): Promise<boolean> {
  try {
    if (BCRYPT.test(hash)) {
      // loaded only for the users who still have an imported bcrypt hash
      const bcrypt = await import("bcryptjs");
      // the other system hashed what was typed, not necessarily its NFC form
      return (
        (await bcrypt.compare(password, hash)) ||
        (password !== normalizePassword(password) && (await bcrypt.compare(normalizePassword(password), hash)))
      );
    }
    return await (await loadArgon2()).verify(hash, normalizePassword(password));
  } catch {
    return false;
  }
}

/**
 * A hash of a password nobody knows, with the parameters of HASH_OPTIONS (a test checks them).
 * Written out rather than computed: the first unknown user after a start would otherwise pay a
 * hash on top of the verification, and every start a hash it may never need.
 */
export const DUMMY_HASH =
  "$argon2id$v=19$m=19456,p=1,t=2$kFzu/K/j12Zp/E4GsST0tQ$csf/Ld6SWLzSpwtwudQ09b/CAXTCC7tdrhIGdlIOb/I";

/** An imported bcrypt hash, or an argon2id one with other parameters, is replaced at the next login. */
export async function needsRehash(hash: string): Promise<boolean> {
  if (BCRYPT.test(hash)) return true;
  try {
    return (await loadArgon2()).needsRehash(hash, HASH_OPTIONS);
  } catch {
    return true;
  }
}

/** Spends the time of one verification so that an unknown user answers as slowly as a wrong password. */
export async function burnVerification(password: string): Promise<void> {
  await verifyPassword(DUMMY_HASH, password);
}

/**
 * Refuses a new password with the reason (NIST SP 800-63B-4 for password-only login):
 * length counted in code points after NFC, no composition rules, refused when common,
 * a trivial repetition, containing the user name, or equal to the current password.
 */
export async function assertAcceptablePassword(
  password: string,
  context: { userName?: string; currentHash?: string | null },
  policy: PasswordPolicy,
): Promise<void> {
  const normalized = normalizePassword(password);
  const refuse = (reason: string) => {
    throw new ProblemError("weak_password", reason, { errors: [{ path: "/newPassword", message: reason }] });
  };
  const shape = passwordShapeProblem(normalized, { minLength: policy.minLength, userName: context.userName });
  if (shape) refuse(shape);
  if ((await loadCommonPasswords()).has(normalized.toLowerCase()))
    refuse("The password is on a list of commonly used passwords.");
  if (context.currentHash && (await verifyPassword(context.currentHash, normalized))) {
    refuse("The new password must differ from the current one.");
  }
}
