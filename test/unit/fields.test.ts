import { describe, expect, it } from "vitest";
import { parse as parseYaml } from "yaml";
import { render } from "../../src/cli/output.js";

/** `--fields` with dotted paths: every format renders the same selection (tables are cell-bordered). */

const USERS = [
  {
    id: "u1",
    userName: "jdoe",
    name: { givenName: "Jane", familyName: "Doe" },
    emails: [
      { value: "jane@example.com", type: "work" },
      { value: "jd@example.org", type: "home" },
    ],
    title: "Clerk",
  },
  { id: "u2", userName: "nobody", title: "Ghost" },
];
const FIELDS = ["userName", "name.givenName", "emails.value"];
const base = { width: 200, color: false, fields: FIELDS };

describe("--fields with dotted paths", () => {
  const NESTED = [
    {
      userName: "jdoe",
      name: { givenName: "Jane" },
      emails: [{ value: "jane@example.com" }, { value: "jd@example.org" }],
    },
    { userName: "nobody" },
  ];
  it.each([
    ["json", (t: string) => JSON.parse(t)],
    ["yaml", (t: string) => parseYaml(t)],
    [
      "ndjson",
      (t: string) =>
        t
          .trim()
          .split("\n")
          .map((line) => JSON.parse(line)),
    ],
  ] as const)(
    "%s keeps the shape: nested objects, and the selected sub-attribute of each element",
    async (format, parse) => {
      expect(parse(await render(USERS, { ...base, format }))).toEqual(NESTED);
    },
  );

  it("csv has one column a path, the values of a multi-valued attribute joined", async () => {
    const text = await render(USERS, { ...base, format: "csv" });
    expect(text.trim().split("\n")).toEqual([
      "userName,name.givenName,emails.value",
      `jdoe,Jane,"jane@example.com, jd@example.org"`,
      "nobody,,",
    ]);
  });

  it("a table has one column a path, filled", async () => {
    const text = await render(USERS, { ...base, format: "table" });
    expect(text).toMatch(/userName\W+name\.givenName\W+emails\.value/);
    expect(text).toMatch(/jdoe\W+Jane\W+jane@example\.com, jd@example\.org/);
  });

  it("a single record shows the same, one row a path", async () => {
    const text = await render(USERS[0], { ...base, format: "table" });
    expect(text).toMatch(/name\.givenName\W+Jane/);
    expect(text).toMatch(/emails\.value\W+jane@example\.com, jd@example\.org/);
    expect(JSON.parse(await render(USERS[0], { ...base, format: "json" }))).toEqual(NESTED[0]);
  });
});
