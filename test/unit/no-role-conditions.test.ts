/**
 * The CLI writes no role name in a condition: whether a caller may do something is the access
 * policy's answer (src/contract/policy), asked through cli/permissions.ts. When roles can come from
 * groups (spec 1.9), every copy of the rule in a command would be a place to forget. This reads
 * every source file of src/commands and src/cli and refuses a string literal that is exactly a
 * role name, and a SCIM filter that compares with one; words in help text and messages are longer
 * strings and pass. The one kind of exact role literal allowed: a commander option's default
 * (`--admin-user <name>` defaults to the user name "admin", a name, not a role).
 *
 * The server enforces the policy and so holds role names as data (the first admin's roles, the
 * role a credential was issued under); what it may not hold is a condition on one: a role name
 * given to `includes`, compared with `===` or a `case`, or a SCIM filter on one. Those questions
 * are the policy's operations (who reads the whole audit trail, whose OAuth grants an admin lists).
 */
import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import ts from "typescript";
import { describe, expect, it } from "vitest";
import { ROLES } from "../../src/contract/route.js";

const ROOT = join(import.meta.dirname, "..", "..");
const ROLE_NAMES: ReadonlySet<string> = new Set(ROLES);
const FILTER_ON_ROLE = new RegExp(`\\b(?:eq|ne|co|sw|ew)\\s+"(?:${ROLES.join("|")})"`, "i");

const sourcesUnder = (dir: string): string[] =>
  readdirSync(join(ROOT, dir), { recursive: true, encoding: "utf8" })
    .filter((name) => name.endsWith(".ts"))
    .map((name) => join(dir, name));

/** `.option(flags, description, default)`: the literal is the option's default value. */
function isOptionDefault(node: ts.Node): boolean {
  const call = node.parent;
  return (
    ts.isCallExpression(call) &&
    ts.isPropertyAccessExpression(call.expression) &&
    call.expression.name.text === "option" &&
    call.arguments.indexOf(node as ts.Expression) === 2
  );
}

const EQUALITY = new Set([
  ts.SyntaxKind.EqualsEqualsEqualsToken,
  ts.SyntaxKind.ExclamationEqualsEqualsToken,
  ts.SyntaxKind.EqualsEqualsToken,
  ts.SyntaxKind.ExclamationEqualsToken,
]);

/** The literal is a condition's operand: `x.includes(lit)`, `x === lit`, `case lit:`. */
function isConditionOperand(node: ts.Node): boolean {
  const parent = node.parent;
  if (ts.isCaseClause(parent)) return parent.expression === node;
  if (ts.isBinaryExpression(parent)) return EQUALITY.has(parent.operatorToken.kind);
  return (
    ts.isCallExpression(parent) &&
    ts.isPropertyAccessExpression(parent.expression) &&
    ["includes", "has", "indexOf"].includes(parent.expression.name.text) &&
    parent.arguments.includes(node as ts.Expression)
  );
}

/**
 * Every string literal of the source that names a role or filters on one: `file:line "text"`;
 * with `conditionsOnly` (the server's sources), the role names that stand in a condition.
 */
function roleLiterals(file: string, text: string, conditionsOnly = false): string[] {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const found: string[] = [];
  const named = (node: ts.StringLiteralLike) =>
    conditionsOnly ? ROLE_NAMES.has(node.text) && isConditionOperand(node) : ROLE_NAMES.has(node.text);
  const visit = (node: ts.Node) => {
    if (ts.isStringLiteralLike(node) && !isOptionDefault(node)) {
      if (named(node) || FILTER_ON_ROLE.test(node.text)) {
        const { line } = source.getLineAndCharacterOfPosition(node.getStart());
        found.push(`${file}:${line + 1} ${JSON.stringify(node.text)}`);
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

describe("role names in the CLI", () => {
  const files = [...sourcesUnder("src/commands"), ...sourcesUnder("src/cli")];

  it("reads the commands and the CLI's own files", () => {
    expect(files.length).toBeGreaterThan(50);
  });

  it("no condition in src/commands or src/cli names a role: the access policy decides", () => {
    const found = files.flatMap((file) =>
      roleLiterals(relative(ROOT, join(ROOT, file)), readFileSync(join(ROOT, file), "utf8")),
    );
    expect(found).toEqual([]);
  });

  it("no condition in src/server names a role: it asks the access policy's operations", () => {
    const found = sourcesUnder("src/server").flatMap((file) =>
      roleLiterals(relative(ROOT, join(ROOT, file)), readFileSync(join(ROOT, file), "utf8"), true),
    );
    expect(found).toEqual([]);
  });

  // the guard itself: what it must catch and what it must let pass
  it.each([
    ['if (roles.includes("admin")) return;', 1],
    ["const may = (roles) => roles.includes('support') && !privileged;", 1],
    ['if (role.value === "member") {}', 1],
    ["switch (role) { case `admin`: break; }", 1],
    ["const f = 'roles.value eq \"admin\" and active eq true';", 1],
    ['program.option("--admin-user <name>", "the user", "admin");', 0],
    ['const help = "set a temporary password (admin, or support on ordinary users)";', 0],
    ['await refuseBeforeAsking(ctx, "users:delete", {}, { about: "users" });', 0],
  ])("%s: %i found", (code, count) => {
    expect(roleLiterals("sample.ts", code)).toHaveLength(count);
  });

  // on the server, conditions only: role names as data pass
  it.each([
    ['if (principal.roles.includes("admin")) return undefined;', 1],
    ['return issuerRole !== "admin" && issuerRole !== "support";', 2],
    ["switch (role) { case 'member': break; }", 1],
    ['const roles = [{ value: "admin", primary: true }];', 0],
    ['await save(trx, id, { issuerRole: "admin" });', 0],
  ])("server: %s: %i found", (code, count) => {
    expect(roleLiterals("sample.ts", code, true)).toHaveLength(count);
  });
});
