/**
 * How a failed schema reads in a problem document's `errors`: the issues of a real ajv, with the
 * server's options, turned into paths and messages.
 */
import { Type } from "@sinclair/typebox";
import { Ajv } from "ajv";
import { describe, expect, it } from "vitest";
import { type AjvIssue, fieldIssues } from "../../src/server/validation-issues.js";

const ajv = new Ajv({ coerceTypes: false, allErrors: true, strict: false });

function issuesOf(schema: object, value: unknown, context = "body") {
  const validate = ajv.compile(schema);
  expect(validate(value)).toBe(false);
  return fieldIssues(context, (validate.errors ?? []) as unknown as AjvIssue[]);
}

describe("validation issues", () => {
  const Ranged = Type.Object({ size: Type.Integer({ minimum: 1, maximum: 100 }) });

  it("says a range's bound in words", () => {
    expect(issuesOf(Ranged, { size: 0 })).toEqual([{ path: "/size", message: "must be at least 1" }]);
    expect(issuesOf(Ranged, { size: 101 })).toEqual([{ path: "/size", message: "must be at most 100" }]);
  });

  it("points into the query for a query parameter", () => {
    expect(issuesOf(Ranged, { size: 101 }, "querystring")).toEqual([
      { path: "/query/size", message: "must be at most 100" },
    ]);
  });

  it("keeps ajv's words for the other keywords", () => {
    expect(issuesOf(Ranged, { size: "5" })).toEqual([{ path: "/size", message: "must be integer" }]);
  });
});
