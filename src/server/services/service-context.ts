import type { FastifyBaseLogger } from "fastify";
import type { ApiTokenScope, Role } from "../../contract/route.js";
import type { Mailer } from "../mail/types.js";
import type { Metrics } from "../metrics/metrics.js";
import type { Store } from "../store/database.js";
import type { NameFailures } from "../store/name-failures.js";
import type { KeyRing } from "./keys.js";
import type { PasswordPolicy } from "./passwords.js";
import type { Sealer } from "./sealing.js";

export type Clock = () => Date;

/** What every service needs, built once per app. */
export interface ServiceContext {
  store: Store;
  keys: KeyRing;
  clock: Clock;
  tokenTtlSeconds: number;
  /** open login sessions a user may hold; a login beyond ends the oldest */
  maxSessionsPerUser: number;
  imports: ImportQuota;
  /** the failed logins of names that hold no usable account (services/login-backoff.ts) */
  nameFailures: NameFailures;
  passwordPolicy: PasswordPolicy;
  /** absolute base of `meta.location` and e-mailed links; relative locations without it */
  publicUrl?: string;
  /** base of links in e-mails: the public URL, else the address the server listens on */
  linkBase: () => string;
  mailer: Mailer;
  resetTokenTtlSeconds: number;
  inviteTtlSeconds: number;
  /** how many days a deleted User or Group is kept for a restore; 0 deletes at once (services/retention.ts) */
  retainDeletedDays: number;
  /** the roles whose holders must have a second factor before anything but enrolling (`--require-mfa`) */
  requireMfaRoles: readonly Role[];
  /** what operators see (`--metrics-port`); does nothing without it */
  metrics: Metrics;
  log: () => FastifyBaseLogger;
  /** seals what must be read back (TOTP seeds) under the deployment secret (services/sealing.ts) */
  sealer: Sealer;
  /** development only: accept PLAINTEXT OAuth signatures over plain HTTP */
  allowPlaintextOverHttp?: boolean;
}

/** What one atomic event import may hold, and how many one user may have open at once. */
export interface ImportQuota {
  maxItems: number;
  maxBytes: number;
  maxOpen: number;
}

/** The authenticated caller of a request. */
export interface Principal {
  userId: string;
  userName: string;
  displayName?: string;
  roles: Role[];
  firstLogin: boolean;
  /**
   * the server requires a second factor of one of the caller's roles and the account has none
   * (a login session's: read with the session on every request, so an enrollment lifts it at once)
   */
  mfaEnrollmentRequired?: boolean;
  sessionId: string;
  expiresAt: Date;
  /** the OAuth consumer acting for the user (a request signed with token credentials) */
  consumerId?: string;
  /**
   * set when the credential was delegated to an application (OAuth token credentials) or is an
   * API token: it acts on the data the user may act on, never on the account itself
   */
  delegated?: "oauth" | "apiToken";
  /** the credential is a service account's API token (spec 1.9) */
  serviceAccount?: true;
  /** an API token's: the token's id, and the scopes an operation must be among (contract Access.scope) */
  apiTokenId?: string;
  /** an API token's name, which `GET /auth/isLogged` tells its holder */
  apiTokenName?: string;
  scopes?: readonly ApiTokenScope[];
  /** where the request came from, for the audit trail */
  origin?: RequestOrigin;
}

/** Where a request came from, as the route layer saw it: what the audit trail records of it. */
export interface RequestOrigin {
  requestId?: string;
  /** the client address, the forwarded one behind --trust-proxy */
  ip?: string;
  userAgent?: string;
}
