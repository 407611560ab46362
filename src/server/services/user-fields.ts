import { USER_NAME_PATTERN } from "../../contract/resources.js";
import { invalid } from "../problem-error.js";

// The checks of a User's userName and e-mail addresses that a schema cannot say in words a person reads.

const USER_NAME = new RegExp(USER_NAME_PATTERN);

/** Refuses a userName holding control characters, with a message that says so rather than the pattern. */
export function assertUserName(userName: string): void {
  if (userName && !USER_NAME.test(userName)) {
    throw invalid(
      "A userName may not hold control characters (C0, DEL, C1) or bidi controls.",
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
