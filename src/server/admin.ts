import { join } from "node:path";
import { generatePassword } from "../contract/passwords.js";
import type { ServerOptions } from "./options.js";
import { DEFAULTS } from "./options.js";
import { createFirstAdmin } from "./services/accounts.js";
import type { ServiceContext } from "./services/context.js";
import { KeyRing } from "./services/keys.js";
import { openStore } from "./store/database.js";
import { migrateToLatest } from "./store/migrations.js";

type InstanceOptions = Pick<ServerOptions, "dataDir" | "databaseUrl" | "passwordMinLength">;

async function withServices<T>(options: InstanceOptions, work: (ctx: ServiceContext, applied: string[]) => Promise<T>) {
  const clock = () => new Date();
  const store = await openStore(options);
  try {
    const applied = await migrateToLatest(store.db);
    const keys = await KeyRing.open(join(options.dataDir, "keys"), clock);
    return await work(
      {
        store,
        keys,
        clock,
        tokenTtlSeconds: DEFAULTS.tokenTtlSeconds,
        passwordPolicy: { minLength: options.passwordMinLength ?? DEFAULTS.passwordMinLength },
      },
      applied,
    );
  } finally {
    await store.close();
  }
}

/** `server init`: data dir, keys, schema and the first admin (with a one-time password unless one is given). */
export async function initInstance(
  options: InstanceOptions & { adminUser: string; adminEmail?: string; password?: string },
) {
  return withServices(options, async (ctx) => {
    const oneTimePassword = options.password ? undefined : generatePassword();
    const admin = await createFirstAdmin(ctx, {
      userName: options.adminUser,
      email: options.adminEmail,
      password: options.password ?? (oneTimePassword as string),
      temporary: !options.password,
    });
    return { ...admin, dataDir: options.dataDir, database: ctx.store.describe, oneTimePassword };
  });
}

/** `server migrate`: applies pending schema migrations and names them. */
export async function migrateInstance(options: InstanceOptions) {
  return withServices(options, async (ctx, applied) => ({ database: ctx.store.describe, applied }));
}
