import type { Role } from "../../contract/route.js";
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
