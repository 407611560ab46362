import { USER_NAME_PATTERN } from "../../contract/resources.js";
import { invalid } from "../problem-error.js";

// The checks of a User's userName and e-mail addresses that a schema cannot say in words a person reads.

const USER_NAME = new RegExp(USER_NAME_PATTERN);
/**
 * Control (Cc) and format (Cf) characters: C0, DEL, C1, and the invisible ones (zero-width space,
 * joiners, bidi controls, the BOM, soft hyphen), with which `admin\u200b` looks like `admin`.
 */
const INVISIBLE = /[\p{Cc}\p{Cf}]/u;

/**
 * Refuses a userName holding control or format characters, with a message that names the code
 * point rather than the pattern (and does not echo the character).
 */
export function assertUserName(userName: string): void {
  const found = INVISIBLE.exec(userName);
  if (found || (userName && !USER_NAME.test(userName))) {
    const codePoint = found?.[0].codePointAt(0)?.toString(16).toUpperCase().padStart(4, "0");
    throw invalid(
      `A userName may not hold control characters (C0, DEL, C1) or invisible format characters (zero-width, bidi controls, BOM)${codePoint ? `: U+${codePoint} at position ${(found?.index ?? 0) + 1}` : ""}.`,
      "/userName",
      "invalidValue",
    );
  }
}

/** What the HTML standard accepts as an e-mail address (input type=email): ASCII, no quoted parts. */
const EMAIL =
  /^[a-zA-Z0-9.!#$%&'*+/=?^_`{|}~-]+@[a-zA-Z0-9](?:[a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?(?:\.[a-zA-Z0-9](?:[a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?)*$/;

/** Refuses a User's e-mail that could never receive a link, naming the value's place. */
export function assertEmails(emails: unknown): void {
  if (!Array.isArray(emails)) return;
  emails.forEach((email, index) => {
    const value = (email as { value?: unknown })?.value;
    if (typeof value === "string" && !EMAIL.test(value)) {
      throw invalid(`emails[${index}].value is not an e-mail address.`, `/emails/${index}/value`, "invalidValue");
    }
  });
}
