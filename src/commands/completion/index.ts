import type { Command } from "commander";
import type { Context } from "../../cli/command-context.js";
import { SHELLS } from "../../cli/completion.js";
import { UsageError } from "../../cli/errors.js";
import { examples } from "../verb-helpers.js";

export function register(program: Command, io: Context["io"]): void {
  program
    .command("completion <shell>")
    .description("print a completion script for bash, zsh or fish")
    .addHelpText(
      "after",
      examples(
        "source <(bizctl completion bash)",
        "bizctl completion zsh > ~/.zfunc/_bizctl",
        "bizctl completion fish > ~/.config/fish/completions/bizctl.fish",
      ),
    )
    .action((shell: string) => {
      const generate = SHELLS[shell as keyof typeof SHELLS];
      if (!generate) throw new UsageError(`Unknown shell '${shell}'; use bash, zsh or fish.`);
      io.stdout.write(generate(program));
    });
}
