import type { Command } from "commander";
import type { Context } from "../../cli/command-context.js";
import * as backup from "./backup.js";
import * as init from "./init.js";
import * as mailQueue from "./mail-queue.js";
import * as migrate from "./migrate.js";
import * as outbox from "./outbox/index.js";
import * as recoverAdmin from "./recover-admin.js";
import * as rotateKey from "./rotate-key.js";
import * as start from "./start.js";

export function register(program: Command, io: Context["io"]): void {
  const group = program.command("server").description("run and administer the API server");
  for (const verb of [init, start, migrate, backup, outbox, mailQueue, rotateKey, recoverAdmin]) {
    verb.register(group, io);
  }
}
