import type { Command } from "commander";
import type { Context } from "../../cli/command-context.js";
import { EXIT, EXIT_MEANINGS, UsageError } from "../../cli/errors.js";

export function exitCodeTable(): string {
  return `${Object.entries(EXIT)
    .map(([name, code]) => `  ${String(code).padStart(3)}  ${EXIT_MEANINGS[name as keyof typeof EXIT]}`)
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
