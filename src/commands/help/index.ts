import type { Command } from "commander";
import type { Context } from "../../cli/command-context.js";
import { EXIT, UsageError } from "../../cli/errors.js";

const MEANINGS: Record<keyof typeof EXIT, string> = {
  ok: "success",
  failure: "other failure (including rate limiting)",
  usage: "usage error or missing input",
  notFound: "not found",
  unauthenticated: "not authenticated: no, expired or revoked token; bad credentials",
  forbidden: "forbidden (including a pending password change)",
  conflict: "conflict or precondition failed",
  validation: "validation failed",
  unavailable: "server unreachable or 5xx",
  interrupted: "interrupted",
};

export function exitCodeTable(): string {
  return `${Object.entries(EXIT)
    .map(([name, code]) => `  ${String(code).padStart(3)}  ${MEANINGS[name as keyof typeof EXIT]}`)
    .join("\n")}\n`;
}

export function register(program: Command, io: Context["io"]): void {
  program.helpCommand(false);
  program
    .command("help [topic...]")
    .description("help on a command, or 'exit-codes'")
    .action((topic: string[]) => {
      if (topic.join(" ") === "exit-codes") {
        io.stdout.write(`Exit codes of bizctl:\n${exitCodeTable()}`);
        return;
      }
      let command: Command = program;
      for (const name of topic) {
        const next = command.commands.find((c) => c.name() === name || c.aliases().includes(name));
        // a script that asks for help on a misspelt command must not read the top-level help as an answer
        if (!next) {
          const known = command.commands.map((c) => c.name());
          const where = command === program ? "" : ` under '${command.name()}'`;
          throw new UsageError(
            `No help topic or command '${name}'${where}.`,
            `one of: ${command === program ? "exit-codes, " : ""}${known.join(", ")}`,
          );
        }
        command = next;
      }
      io.stdout.write(command.helpInformation());
    });
}
