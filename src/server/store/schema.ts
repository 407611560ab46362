import type { ColumnType } from "kysely";

export interface ResourcesTable {
  id: string;
  resource_type: string;
  external_id: string | null;
  display_name: string | null;
  /** lower-cased userName of a User; unique, so the case-insensitive uniqueness is the database's */
  user_name_key: string | null;
  /** JSON of every attribute but id and meta */
  attributes: string;
  created_at: string;
  updated_at: string;
  version: number;
  /** 1 for a service account (a User that is not a person: no password, no login; spec 1.9), else 0 */
  service_account: ColumnType<number, number | undefined, number>;
  // The table also has `user_active`, which the database derives from `attributes` (migration
  // 0033) and which may never be written: a filter reads it in SQL, and it is left out of this
  // type so that no code writes a row it read back with it.
}

export interface CredentialsTable {
  user_id: string;
  password_hash: string | null;
  first_login: number;
  failed_logins: number;
  locked_until: string | null;
  updated_at: string;
  /** the last successful login */
  last_login_at: string | null;
  /** when the password hash last changed (set by anyone) */
  password_changed_at: string | null;
  /** the role a password was set under by someone else (a temporary one): 'admin' or 'support'; null for the user's own */
  issuer_role: string | null;
  /** the last failed login: failures are forgotten a day after it */
  last_failed_login_at: string | null;
  /** 1: the e-mail addresses were last set by a person's API token or OAuth grant (contract/policy/addresses.ts) */
  addresses_by_delegate: number;
}

export interface SessionsTable {
  id: string;
  user_id: string;
  created_at: string;
  expires_at: string;
  revoked_at: string | null;
  /** where the login came from (the rate limiter's address) and what it said it was */
  client_ip: string | null;
  user_agent: string | null;
  /** refreshed at most once a minute (SESSION_TOUCH_MS), not on every request */
  last_used_at: string | null;
}

export interface EventsTable {
  code_key: string;
  code: string;
  name: string;
  description: string | null;
  type: string | null;
  starts_at: string;
  ends_at: string | null;
  all_day: number | null;
  location: string | null;
  organizer: string | null;
  attendees: string | null;
  tags: string | null;
  custom_fields: string | null;
  created_at: string;
  updated_at: string;
  created_by: string | null;
  version: number;
  /** set while an atomic import commits the row: hidden from every read and count until it is cleared */
  import_id: string | null;
}

export interface ResourceValuesTable {
  resource_id: string;
  path: string;
  /** index in the outermost array on the path; an element's own marker row has kind 'e' */
  elem: number | null;
  kind: "s" | "n" | "b" | "e";
  text_value: string | null;
  num_value: number | null;
}

export interface ResourceSecretsTable {
  resource_id: string;
  secret: string;
}

export interface PasswordResetsTable {
  token_hash: string;
  user_id: string;
  created_at: string;
  expires_at: string;
  used_at: string | null;
  /** null for a reset link, 'invitation' for an invitation's: the same single-use link, another mail */
  purpose: string | null;
  /** the role the link was sent under by someone else ('admin' or 'support'); null when the user asked */
  issuer_role: string | null;
  /** the account's stamp when the link was issued (services/issued-credentials.ts); a change voids the link */
  account_stamp: string | null;
  /**
   * the queued message that carries the link: until it is sent, token_hash hashes a token nobody
   * holds, and the sender puts a fresh token's hash in its place as it sends
   */
  mail_id: string | null;
}

/**
 * Every (timestamp, consumer, token, nonce) accepted, kept until the timestamp leaves the window;
 * keyed in that order, so that new rows land together and expiry is a range of the key.
 */
export interface OAuthNoncesTable {
  /** oauth_timestamp, seconds since 1970 (written as its decimal text; PostgreSQL's driver reads a bigint back as text) */
  ts: ColumnType<number | string, string, never>;
  consumer_id: string;
  /** the token identifier, or '' for a request without one */
  token: string;
  nonce: string;
}

/** Temporary credentials: bound to a consumer and a callback; approved once, exchanged once. */
export interface OAuthTemporaryCredentialsTable {
  token: string;
  secret: string;
  consumer_id: string;
  callback: string;
  /** SHA-256 of the verifier, set when the owner approves */
  verifier_hash: string | null;
  user_id: string | null;
  created_at: string;
  expires_at: string;
  authorized_at: string | null;
  used_at: string | null;
}

/** Token credentials; each has a session row, so logout, password changes and disabling end it. */
export interface OAuthTokensTable {
  token: string;
  secret: string;
  consumer_id: string;
  user_id: string;
  session_id: string;
  created_at: string;
  expires_at: string;
  /** when a signed request last used them, to the minute (not written on every request) */
  last_used_at: string | null;
}

/** A form the browser authorization page served: its single-use token, bound to temporary credentials. */
export interface OAuthPageFormsTable {
  /** SHA-256 of the form token */
  token_hash: string;
  temporary_token: string;
  expires_at: string;
}

/** JWT signing keys shared by every instance; the private half sealed under the deployment secret. */
export interface SigningKeysTable {
  kid: string;
  created_at: string;
  /** the key signs from this instant on; before, it is only published */
  sign_from: string;
  /** the private JWK, AES-256-GCM-sealed with the kid as additional data */
  sealed_private_jwk: string;
}

/**
 * Outgoing mail, kept until sent so that any instance may send it and a restart loses none.
 * A sender claims a row by setting `claimed_until` (a lease) and marks it sent after SMTP accepts.
 */
/**
 * What a row of the queue is: a message to send; a message carrying a single-use link, whose
 * link the sender makes as it sends (body_text holds what the message says beside it, as JSON:
 * never the link); or a job the sender does and then deletes (a password reset asked for by name
 * or address: its request, as JSON, is in body_text)
 */
export type MailKind = "message" | "link" | "password_reset";

export interface MailQueueTable {
  id: string;
  kind: MailKind;
  /** the address; empty for a job */
  recipient: string;
  subject: string;
  /** null once the message is sent or given up: a reset link stays in the database no longer than needed */
  body_text: string | null;
  body_html: string | null;
  status: "queued" | "sent" | "failed";
  /** attempts started so far, counted when a sender claims the message */
  attempts: number;
  next_attempt_at: string;
  claimed_until: string | null;
  /** the instance holding the lease */
  claimed_by: string | null;
  last_error: string | null;
  created_at: string;
  sent_at: string | null;
}

export interface Schema {
  resources: ResourcesTable;
  credentials: CredentialsTable;
  sessions: SessionsTable;
  events: EventsTable;
  resource_values: ResourceValuesTable;
  resource_secrets: ResourceSecretsTable;
  password_resets: PasswordResetsTable;
  oauth_nonces: OAuthNoncesTable;
  oauth_temporary_credentials: OAuthTemporaryCredentialsTable;
  oauth_tokens: OAuthTokensTable;
  signing_keys: SigningKeysTable;
  mail_queue: MailQueueTable;
  events_count: EventsCountTable;
  events_type_count: EventsTypeCountTable;
  resource_type_count: ResourceTypeCountTable;
  user_active_count: UserActiveCountTable;
  oauth_page_forms: OAuthPageFormsTable;
  event_imports: EventImportsTable;
  event_import_items: EventImportItemsTable;
  audit_log: AuditLogTable;
  totp_factors: TotpFactorsTable;
  totp_recovery_codes: TotpRecoveryCodesTable;
  api_tokens: ApiTokensTable;
  groups: GroupsTable;
  group_members: GroupMembersTable;
  deleted_users: DeletedUsersTable;
  deleted_groups: DeletedGroupsTable;
}

/** A deleted Group kept until `purge_after` (services/deleted-groups.ts). */
export interface DeletedGroupsTable {
  id: string;
  display_name: string;
  display_key: string;
  external_id: string | null;
  row: string;
  member_ids: string;
  deleted_at: string;
  purge_after: string;
}

/** A deleted User kept until `purge_after` (services/deleted-users.ts). */
export interface DeletedUsersTable {
  id: string;
  user_name: string;
  user_name_key: string;
  external_id: string | null;
  row: string;
  group_ids: string;
  deleted_at: string;
  purge_after: string;
}

/** SCIM Groups (services/scim-groups.ts): the roles a group grants its members as flags (0 or 1). */
export interface GroupsTable {
  id: string;
  display_name: string;
  /** the display name in lower case (NFC): unique */
  display_key: string;
  external_id: string | null;
  grants_admin: number;
  grants_support: number;
  grants_member: number;
  version: number;
  created_at: string;
  updated_at: string;
}

/** One member of one group: a User. */
export interface GroupMembersTable {
  group_id: string;
  user_id: string;
}

/** API tokens for scripts: their SHA-256, never the token (services/api-tokens.ts). */
export interface ApiTokensTable {
  id: string;
  token_hash: string;
  user_id: string;
  name: string;
  /** the scopes, space-separated (as OAuth writes them): always listed, never "every scope" */
  scopes: string;
  created_at: string;
  expires_at: string;
  revoked_at: string | null;
  /** refreshed at most once a minute, or when the client address changes */
  last_used_at: string | null;
  last_used_ip: string | null;
}

/** One security-relevant action, append-only. Never a password, hash, token, secret or link. */
export interface AuditLogTable {
  /** sorts in time order (see services/audit.ts) */
  id: string;
  time: string;
  actor_id: string | null;
  actor_user_name: string | null;
  /** the OAuth consumer acting for the user, when the request was signed with token credentials */
  actor_consumer_id: string | null;
  /** the API token the request came with, when it came with one */
  actor_api_token_id: string | null;
  /** that token's name when it acted, kept so that revoking or deleting the token loses nothing */
  actor_api_token_name: ColumnType<string | null, string | null | undefined, never>;
  action: string;
  target_type: string | null;
  target_id: string | null;
  /** the target's name when it has one (a userName, an event code), for people reading the trail */
  target_name: string | null;
  /** 'success' or the problem code */
  outcome: string;
  request_id: string | null;
  client_ip: string | null;
  user_agent: string | null;
  /** small JSON */
  details: string | null;
}

/** Slots whose sum is the number of events, kept by triggers so that an unfiltered total costs no scan. */
export interface EventsCountTable {
  id: number;
  n: number;
}

/** Per lower(type), slots whose sum is the number of events of that type, kept by triggers like events_count. */
export interface EventsTypeCountTable {
  type_key: string;
  slot: number;
  n: number;
}

/** Per resource type, slots whose sum is the number of resources of that type, kept by triggers like events_count. */
export interface ResourceTypeCountTable {
  resource_type: string;
  slot: number;
  n: number;
}

/** Slots whose sum is the number of Users whose `active` is 'true' or 'false', kept by triggers. */
export interface UserActiveCountTable {
  active: string;
  slot: number;
  n: number;
}

export interface EventImportsTable {
  id: string;
  created_by: string;
  on_conflict: string;
  created_at: string;
  next_seq: number;
  /** 'open' while it stages, 'committing' from its commit on (a second commit is refused) */
  state: ColumnType<"open" | "committing", "open" | "committing" | undefined, "open" | "committing">;
  /** bytes of the events staged so far (the quota) */
  staged_bytes: ColumnType<number | string, number | undefined, number>;
  commit_started_at: string | null;
}

export interface EventImportItemsTable {
  import_id: string;
  seq: number;
  ref: number | null;
  /** the event as sent, validated when staged and turned into a row at the commit */
  body: string;
}

/** A user's TOTP factor (RFC 6238): pending until a first code activates it. */
export interface TotpFactorsTable {
  user_id: string;
  /** the base32 seed, sealed under the deployment secret with the user id as additional data */
  sealed_secret: string;
  created_at: string;
  /** null while the enrollment is pending */
  enabled_at: string | null;
  /** the time step of the last code accepted; that step and earlier ones are refused (replay) */
  last_step: number | null;
}

/** A single-use recovery code of a TOTP factor, kept only as a hash. */
export interface TotpRecoveryCodesTable {
  code_hash: string;
  user_id: string;
  created_at: string;
  used_at: string | null;
}
