import type { FastifyBaseLogger } from "fastify";
import type { Role } from "../../contract/route.js";
import type { Mailer } from "../mail/mailer.js";
import type { Store } from "../store/database.js";
import type { KeyRing } from "./keys.js";
import type { PasswordPolicy } from "./passwords.js";

export type Clock = () => Date;

/** What every service needs, built once per app. */
export interface ServiceContext {
  store: Store;
  keys: KeyRing;
  clock: Clock;
  tokenTtlSeconds: number;
  passwordPolicy: PasswordPolicy;
  /** absolute base of `meta.location` and e-mailed links; relative locations without it */
  publicUrl?: string;
  /** base of links in e-mails: the public URL, else the address the server listens on */
  linkBase: () => string;
  mailer: Mailer;
  resetTokenTtlSeconds: number;
  inviteTtlSeconds: number;
  log: () => FastifyBaseLogger;
  /** development only: accept PLAINTEXT OAuth signatures over plain HTTP */
  allowPlaintextOverHttp?: boolean;
}

/** The authenticated caller of a request. */
export interface Principal {
  userId: string;
  userName: string;
  displayName?: string;
  roles: Role[];
  firstLogin: boolean;
  sessionId: string;
  expiresAt: Date;
}
