import type { DestinationStream } from "pino";
import type { Clock } from "./services/context.js";

export interface ServerOptions {
  /** where the SQLite file, the keys and the outbox live */
  dataDir: string;
  /** `postgres://…` or a SQLite path; default `<dataDir>/bizctl.db` */
  databaseUrl?: string;
  /** the URL users reach the server at; links in e-mails are built from it, never from Host */
  publicUrl?: string;
  tokenTtlSeconds?: number;
  passwordMinLength?: number;
  bodyLimitBytes?: number;
  /** false: silent (the embedded CLI); otherwise pino at this level, to this stream */
  log?: false | { level: string; stream?: DestinationStream };
  trustProxy?: boolean;
  clock?: Clock;
}

export const DEFAULTS = {
  tokenTtlSeconds: 8 * 3600,
  passwordMinLength: 15,
  bodyLimitBytes: 1024 * 1024,
} as const;
