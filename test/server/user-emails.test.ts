import { describe, expect, it } from "vitest";
import { createResource, problemOf, useTestServer } from "../helpers/server.js";

/** A User's e-mail addresses are checked wherever a User is written: one that could never receive a link is a 400. */
const ADDRESSES: { value: string; valid: boolean }[] = [
  { value: "jdoe@example.com", valid: true },
  { value: "J.Doe+work@mail.example.co.uk", valid: true },
  { value: "it@localhost", valid: true },
  { value: "not-an-email", valid: false },
  { value: "jdoe@", valid: false },
  { value: "@example.com", valid: false },
  { value: "j doe@example.com", valid: false },
  { value: "jdoe@example..com", valid: false },
  { value: "jdoe@-example.com", valid: false },
];

describe("e-mail addresses of Users", () => {
  const admin = useTestServer().call;
  let counter = 0;

  for (const { value, valid } of ADDRESSES)
    it(`${valid ? "accepts" : "refuses"} ${JSON.stringify(value)} on create and on replace`, async () => {
      const userName = `mail.${++counter}`;
      const body = { resourceType: "User", userName, emails: [{ value: "ok@example.com" }, { value }] };
      const created = await admin("POST", "/Resources", body);
      if (valid) {
        expect(created.statusCode, created.body).toBe(201);
        return;
      }
      const problem = problemOf(created, 400, "validation_failed");
      expect(problem.errors).toEqual([{ path: "/emails/1/value", message: expect.any(String) }]);
      expect(problem.detail).toContain("emails[1].value is not an e-mail address");
      const user = await createResource(admin, { resourceType: "User", userName });
      const replaced = await admin("PUT", `/Resources/${user.id}`, { ...user, emails: [{ value }] });
      problemOf(replaced, 400, "validation_failed");
      expect((await admin("GET", `/Resources/${user.id}`)).json()).toEqual(user);
    });
});
