import { UsageError } from "./errors.js";

/** The JMESPath library is loaded only when `--query` is given: most runs never need it. */
async function jmespath() {
  return import("@jmespath-community/jmespath");
}

function refused(expression: string, error: unknown): UsageError {
  const reason = error instanceof Error ? error.message : String(error);
  return new UsageError(
    `--query '${expression}' is not a JMESPath expression this CLI can run: ${reason}`,
    "see https://jmespath.org, e.g. --query '[].{code: code, name: name}'",
  );
}

/** Parses `--query` before the command runs, so that a typo reads, sends and changes nothing. */
export async function checkQuery(expression: string | undefined): Promise<void> {
  if (expression === undefined) return;
  const { compile } = await jmespath();
  try {
    compile(expression);
  } catch (error) {
    throw refused(expression, error);
  }
}

/** `--query`: the data as JSON would print it, reshaped by a JMESPath expression (as the AWS CLI's). */
export async function applyQuery(expression: string, data: unknown): Promise<unknown> {
  const { search } = await jmespath();
  try {
    return search(JSON.parse(JSON.stringify(data ?? null)), expression);
  } catch (error) {
    throw refused(expression, error);
  }
}
