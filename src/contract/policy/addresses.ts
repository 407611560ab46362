import { isPrivileged } from "./decide.js";

// Where a link that opens an account may be mailed. A reset or invitation link is a login; an
// address is where it goes. So a person's delegated credential (an API token, an OAuth grant),
// which must never mint a login that outlives it, cannot make an address a privileged account's
// link goes to: an address it sets is not used for such a link until someone confirms it.

/** What a credential tells of how it may vouch for an address. */
export interface AddressWriter {
  /** an application acting for the user (OAuth) or an API token */
  delegated?: "oauth" | "apiToken";
  /** the credential is a service account's token: the identity provider, whose directory is the authority */
  serviceAccount?: boolean;
}

/**
 * Whether what this writer writes of a User confirms its addresses: a person signed in (a login
 * session) or a service account's token. A person's token or OAuth grant does not.
 */
export const confirmsAddresses = (writer: AddressWriter): boolean =>
  writer.delegated === undefined || writer.serviceAccount === true;

/**
 * Whether a reset or invitation link may be mailed to the account's address: not to a privileged
 * account (its effective roles) whose address a person's delegated credential set.
 */
export const mayMailLinkTo = (account: { roles: readonly string[]; addressesByDelegate: boolean }): boolean =>
  !(account.addressesByDelegate && isPrivileged(account.roles));

/** Why a link was not mailed, for the audit trail and the one who asked. */
export const UNCONFIRMED_ADDRESS =
  "its e-mail address was set with an API token or an OAuth grant, and it holds admin or support: " +
  "a link that opens it is mailed only to an address an admin signed in has confirmed (users update USER --email ADDRESS, signed in)";
