import fc from "fast-check";
import { beforeAll, describe, expect, it } from "vitest";
import { createResource, useTestServer } from "../helpers/server.js";

/**
 * Random resources and random filters: the server's answer (SQL over resource_values) must be
 * the answer of the evaluator below, which implements the filter semantics decided for the
 * project directly over the JSON representations:
 * - attribute names are case-insensitive, a schema URN prefix is dropped;
 * - strings compare case-insensitively; a literal only meets values of its own JSON type;
 *   an empty string is no value;
 * - `P` also reaches `P.value` (`emails co "x"`); a multi-valued attribute matches when any
 *   value does; `pr` holds when P or anything under it has a value;
 * - `ne` is "has no value equal to", `eq null` is "not present", `ne null` is "present";
 * - `emails[...]` needs one element to satisfy the whole inner filter;
 * - co/sw/ew with a number, anything but eq/ne with a boolean or null: 400 invalid_filter;
 * - sorting: smallest number, then smallest text (booleans as text), missing last ascending and
 *   first descending, ties by id.
 */

type Literal = string | number | boolean | null;
type Op = "eq" | "ne" | "co" | "sw" | "ew" | "gt" | "ge" | "lt" | "le";
type Node =
  | { kind: "cmp"; path: string; op: Op; value: Literal; shout: boolean; urn: boolean }
  | { kind: "pr"; path: string; shout: boolean; urn: boolean }
  | { kind: "and" | "or"; left: Node; right: Node; parens: boolean }
  | { kind: "not"; inner: Node }
  | { kind: "emails"; inner: Node };

type Json = Record<string, unknown>;
type Scalar = string | number | boolean;

const TOP_PATHS = [
  "userName",
  "title",
  "userType",
  "active",
  "emails",
  "emails.value",
  "emails.type",
  "name",
  "name.familyName",
  "capacity",
  "shoeSize",
];
const ELEMENT_PATHS = ["type", "value", "primary"];
const OPS: Op[] = ["eq", "ne", "co", "sw", "ew", "gt", "ge", "lt", "le"];
const USER_URN = "urn:ietf:params:scim:schemas:core:2.0:User:";

// ---------------------------------------------------------------- the evaluator

/** Every non-empty scalar of a representation under its lower-cased dotted path; arrays flattened. */
function scalars(value: unknown, path = "", out: [string, Scalar][] = []): [string, Scalar][] {
  if (Array.isArray(value)) for (const item of value) scalars(item, path, out);
  else if (value !== null && typeof value === "object") {
    for (const [key, child] of Object.entries(value))
      scalars(child, path ? `${path}.${key.toLowerCase()}` : key.toLowerCase(), out);
  } else if (typeof value === "string") {
    if (value !== "") out.push([path, value]);
  } else if (typeof value === "number" || typeof value === "boolean") out.push([path, value]);
  return out;
}

function compare(op: Op, value: Scalar, literal: Literal): boolean {
  if (literal === null) throw new Error("unreachable");
  if (typeof literal === "boolean") return typeof value === "boolean" && value === literal;
  if (typeof literal === "number") {
    if (typeof value !== "number") return false;
    return {
      eq: value === literal,
      gt: value > literal,
      ge: value >= literal,
      lt: value < literal,
      le: value <= literal,
    }[op as "eq"];
  }
  if (typeof value !== "string") return false;
  const v = value.toLowerCase();
  const l = literal.toLowerCase();
  switch (op) {
    case "eq":
    case "ne":
      return v === l;
    case "co":
      return v.includes(l);
    case "sw":
      return v.startsWith(l);
    case "ew":
      return v.endsWith(l);
    case "gt":
      return v > l;
    case "ge":
      return v >= l;
    case "lt":
      return v < l;
    case "le":
      return v <= l;
  }
}

/** Whether the filter is refused as a whole (400 invalid_filter). */
function invalid(node: Node): boolean {
  switch (node.kind) {
    case "cmp":
      if (node.value === null || typeof node.value === "boolean") return node.op !== "eq" && node.op !== "ne";
      if (typeof node.value === "number") return ["co", "sw", "ew"].includes(node.op);
      return false;
    case "pr":
      return false;
    case "and":
    case "or":
      return invalid(node.left) || invalid(node.right);
    case "not":
    case "emails":
      return invalid(node.inner);
  }
}

/** What an attribute expression sees: the values at a path, and whether anything is at or under it. */
interface View {
  values(path: string): Scalar[];
  present(path: string): boolean;
}

function viewOf(entries: [string, Scalar][], prefix: string, alsoValue: boolean): View {
  const at = (path: string) => (prefix ? `${prefix}.${path}` : path);
  return {
    values(path) {
      const full = at(path);
      const extra = alsoValue ? `${full}.value` : undefined;
      const scalarElement = prefix && path === "value" ? prefix : undefined;
      return entries.filter(([p]) => p === full || p === extra || p === scalarElement).map(([, v]) => v);
    },
    present(path) {
      const full = at(path);
      return entries.some(
        ([p]) => p === full || p.startsWith(`${full}.`) || (prefix !== "" && path === "value" && p === prefix),
      );
    },
  };
}

function matches(node: Node, view: View, resource: Json): boolean {
  switch (node.kind) {
    case "pr":
      return view.present(node.path.toLowerCase());
    case "cmp": {
      const path = node.path.toLowerCase();
      if (node.value === null) return node.op === "eq" ? !view.present(path) : view.present(path);
      const values = view.values(path);
      if (node.op === "ne") return !values.some((v) => compare("eq", v, node.value));
      return values.some((v) => compare(node.op, v, node.value));
    }
    case "and":
      return matches(node.left, view, resource) && matches(node.right, view, resource);
    case "or":
      return matches(node.left, view, resource) || matches(node.right, view, resource);
    case "not":
      return !matches(node.inner, view, resource);
    case "emails": {
      const elements = Array.isArray(resource.emails) ? resource.emails : [];
      return elements.some((element) =>
        matches(node.inner, viewOf(scalars(element, "emails"), "emails", false), resource),
      );
    }
  }
}

function evaluate(node: Node, resource: Json): boolean {
  return matches(node, viewOf(scalars(resource), "", true), resource);
}

interface SortKey {
  num: number | null;
  text: string | null;
}

function sortKey(resource: Json, path: string): SortKey {
  const key = path.toLowerCase();
  const values = scalars(resource)
    .filter(([p]) => p === key || p === `${key}.value`)
    .map(([, v]) => v);
  const numbers = values.filter((v): v is number => typeof v === "number");
  const texts = values.filter((v) => typeof v !== "number").map((v) => String(v).toLowerCase());
  return {
    num: numbers.length ? Math.min(...numbers) : null,
    text: texts.length ? texts.sort()[0]! : null,
  };
}

function expectedOrder(resources: Json[], path: string, descending: boolean): string[] {
  const keyed = resources.map((r) => ({ id: r.id as string, key: sortKey(r, path) }));
  const part = <T extends number | string>(a: T | null, b: T | null): number => {
    if (a === b) return 0;
    // ascending: missing last; descending: missing first
    if (a === null) return descending ? -1 : 1;
    if (b === null) return descending ? 1 : -1;
    const order = a < b ? -1 : 1;
    return descending ? -order : order;
  };
  keyed.sort(
    (a, b) => part(a.key.num, b.key.num) || part(a.key.text, b.key.text) || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0),
  );
  return keyed.map((k) => k.id);
}

// ---------------------------------------------------------------- serialisation

function literalText(value: Literal): string {
  return JSON.stringify(value);
}

function pathText(path: string, shout: boolean, urn: boolean): string {
  const text = shout ? path.toUpperCase() : path;
  return urn ? `${USER_URN}${text}` : text;
}

/** The filter as text, with the parentheses precedence needs (and, at random, some more). */
function serialize(node: Node): string {
  switch (node.kind) {
    case "pr":
      return `${pathText(node.path, node.shout, node.urn)} ${node.shout ? "PR" : "pr"}`;
    case "cmp":
      return `${pathText(node.path, node.shout, node.urn)} ${node.shout ? node.op.toUpperCase() : node.op} ${literalText(node.value)}`;
    case "not":
      return `not (${serialize(node.inner)})`;
    case "emails":
      return `emails[${serialize(node.inner)}]`;
    case "and":
    case "or": {
      const side = (child: Node) =>
        child.kind === "or" && node.kind === "and" ? `(${serialize(child)})` : serialize(child);
      const text = `${side(node.left)} ${node.kind} ${side(node.right)}`;
      return node.parens ? `(${text})` : text;
    }
  }
}

// ---------------------------------------------------------------- generators

const text = fc.string({
  unit: fc.constantFrom("a", "b", "A", "B", "'", "%", "_", "\\", '"', " ", "@", ".", "-"),
  minLength: 0,
  maxLength: 4,
});
const number = fc.oneof(
  fc.integer({ min: -20, max: 20 }),
  fc.integer({ min: -40, max: 40 }).map((n) => n / 4),
);
const emailType = fc.constantFrom("work", "home", "WORK", "other", "");
/** A User's e-mail must be an address (the server checks it); the local part keeps the characters filters escape. */
const address = fc
  .tuple(
    fc.string({ unit: fc.constantFrom("a", "b", "A", "B", "'", "%", "_", ".", "-"), minLength: 1, maxLength: 4 }),
    fc.constantFrom("example.com", "Example.COM", "b.a"),
  )
  .map(([local, domain]) => `${local}@${domain}`);

const userArb = fc.record(
  {
    userName: fc.string({ unit: fc.constantFrom("a", "b", "A", "B", "'", "%", "_", "."), minLength: 1, maxLength: 4 }),
    title: text,
    userType: fc.oneof(fc.constantFrom("Employee", "employee", "Intern", "Contractor"), text),
    active: fc.boolean(),
    emails: fc.array(fc.record({ type: emailType, value: address, primary: fc.boolean() }, { requiredKeys: [] }), {
      maxLength: 3,
    }),
    name: fc.record({ familyName: text, givenName: text }, { requiredKeys: [] }),
  },
  { requiredKeys: ["userName"] },
);

const roomArb = fc.record(
  {
    capacity: number,
    title: fc.oneof(number, text),
    active: fc.oneof(fc.boolean(), text),
    emails: fc.array(fc.oneof(text, fc.record({ value: text }, { requiredKeys: [] })), { maxLength: 2 }),
  },
  { requiredKeys: [] },
);

const dataArb = fc.record({
  users: fc.uniqueArray(userArb, { maxLength: 6, selector: (u) => u.userName.toLowerCase() }),
  rooms: fc.array(roomArb, { maxLength: 3 }),
});

function literalFor(op: Op): fc.Arbitrary<Literal> {
  if (op === "co" || op === "sw" || op === "ew") {
    return fc.oneof(
      { weight: 12, arbitrary: text },
      { weight: 1, arbitrary: number },
      { weight: 1, arbitrary: fc.constant(null) },
    );
  }
  return fc.oneof(
    { weight: 6, arbitrary: text },
    { weight: 3, arbitrary: number },
    { weight: 2, arbitrary: fc.boolean() },
    { weight: 1, arbitrary: fc.constant(null) },
  );
}

function leafArb(paths: string[], urnAllowed: boolean): fc.Arbitrary<Node> {
  const flags = { shout: fc.boolean(), urn: urnAllowed ? fc.boolean() : fc.constant(false) };
  const cmp = fc
    .record({ path: fc.constantFrom(...paths), op: fc.constantFrom(...OPS), ...flags })
    .chain(({ path, op, shout, urn }) =>
      literalFor(op).map((value): Node => ({ kind: "cmp", path, op, value, shout, urn })),
    );
  const pr = fc.record({ path: fc.constantFrom(...paths), ...flags }).map((r): Node => ({ kind: "pr", ...r }));
  return fc.oneof({ weight: 5, arbitrary: cmp }, { weight: 1, arbitrary: pr });
}

function treeArb(leaf: fc.Arbitrary<Node>, element: fc.Arbitrary<Node> | undefined): fc.Arbitrary<Node> {
  const { node } = fc.letrec<{ node: Node }>((tie) => ({
    node: fc.oneof(
      { depthSize: "small", withCrossShrink: true },
      { weight: 4, arbitrary: leaf },
      ...(element ? [{ weight: 1, arbitrary: element }] : []),
      {
        weight: 2,
        arbitrary: fc
          .record({
            kind: fc.constantFrom("and" as const, "or" as const),
            left: tie("node"),
            right: tie("node"),
            parens: fc.boolean(),
          })
          .map((r): Node => r),
      },
      { weight: 1, arbitrary: tie("node").map((inner): Node => ({ kind: "not", inner })) },
    ),
  }));
  return node;
}

const elementArb = treeArb(leafArb(ELEMENT_PATHS, false), undefined).map((inner): Node => ({ kind: "emails", inner }));
const filterArb = treeArb(leafArb(TOP_PATHS, true), elementArb);
const sortArb = fc.record({
  path: fc.constantFrom("userName", "title", "capacity", "emails", "active", "name.familyName", "shoeSize"),
  descending: fc.boolean(),
});

// ---------------------------------------------------------------- the property

describe("resources filter: random resources and filters against an in-memory evaluator", () => {
  // each run deletes the last run's users and makes users of the same names: none is kept deleted
  const server = useTestServer({ retainDeletedDays: 0 });
  const admin = server.call;
  let adminRepresentation: Json;
  beforeAll(async () => {
    adminRepresentation = (await admin("GET", `/Resources/${server.admin.id}`)).json();
  });

  it("returns exactly the resources the evaluator selects, in the evaluator's order", async () => {
    let created: Json[] = [];
    await fc.assert(
      fc.asyncProperty(
        dataArb,
        fc.array(fc.tuple(filterArb, sortArb), { minLength: 1, maxLength: 4 }),
        async (data, queries) => {
          for (const resource of created) {
            const gone = await admin("DELETE", `/Resources/${resource.id}`);
            if (gone.statusCode !== 204) throw new Error(`DELETE answered ${gone.statusCode}`);
          }
          created = [];
          for (const user of data.users) created.push(await createResource(admin, { resourceType: "User", ...user }));
          for (const room of data.rooms) created.push(await createResource(admin, { resourceType: "Room", ...room }));
          const everything = [adminRepresentation, ...created];

          for (const [filter, sort] of queries) {
            const textFilter = serialize(filter);
            const query = `filter=${encodeURIComponent(textFilter)}&sortby=${sort.path}&sortorder=${sort.descending ? "descending" : "ascending"}&count=500`;
            const response = await admin("GET", `/Resources?${query}`);
            if (invalid(filter)) {
              expect(response.statusCode, `${textFilter} → ${response.body.slice(0, 300)}`).toBe(400);
              expect(response.json()).toMatchObject({ code: "invalid_filter", scimType: "invalidFilter" });
              continue;
            }
            expect(response.statusCode, `${textFilter} → ${response.body.slice(0, 300)}`).toBe(200);
            const selected = everything.filter((resource) => evaluate(filter, resource));
            const ids = (response.json().Resources as Json[]).map((r) => r.id);
            expect(ids, `${textFilter} sorted by ${sort.path}`).toEqual(
              expectedOrder(selected, sort.path, sort.descending),
            );
            expect(response.json().totalResults).toBe(selected.length);
          }
        },
      ),
      { numRuns: 100 },
    );
  });
});
