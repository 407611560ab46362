/**
 * `search=` after each kind of write of a User, on both stores: the search reads rows of its own
 * (its values folded, store/user-search-text.ts) that every write keeps current — a create, a
 * PATCH, a PUT, /Bulk creates and PATCHes (what `users import` and `users sync` send) and the
 * restore of a deleted User. Each write leaves a family name with accents: the text without them
 * finds the User, and the family name it had before finds nobody.
 */
import { describe, expect, it } from "vitest";
import { DATABASES, patchOf, type ScimServer, useScimServer } from "../helpers/scim.js";

const BULK = "urn:ietf:params:scim:api:messages:2.0:BulkRequest";

interface Written {
  /** the text that finds the User after the write */
  now: string;
  /** a text that found it before, and must not after (none for a new User) */
  before?: string;
}

type Write = (scim: ScimServer, tag: string) => Promise<Written>;

const userOf = (tag: string, familyName: string) => ({
  schemas: ["urn:ietf:params:scim:schemas:core:2.0:User"],
  userName: `w-${tag}`,
  name: { givenName: "Pat", familyName },
  emails: [{ value: `${tag}@writes.test` }],
});

async function created(scim: ScimServer, tag: string, familyName: string): Promise<string> {
  const answer = await scim.call("POST", "/Users", userOf(tag, familyName));
  expect(answer.status, answer.text).toBe(201);
  return answer.json().id as string;
}

async function bulk(scim: ScimServer, operation: Record<string, unknown>): Promise<void> {
  const answer = await scim.call("POST", "/Bulk", { schemas: [BULK], Operations: [{ bulkId: "w", ...operation }] });
  expect(answer.status, answer.text).toBe(200);
  expect(answer.json().Operations[0].status, answer.text).toMatch(/^2/);
}

const WRITES: { name: string; write: Write }[] = [
  {
    name: "a create",
    write: async (scim, tag) => {
      await created(scim, tag, `Mü${tag}`);
      return { now: `mu${tag}` };
    },
  },
  {
    name: "a PATCH",
    write: async (scim, tag) => {
      const id = await created(scim, tag, `Öld${tag}`);
      const patch = patchOf({ op: "replace", path: "name.familyName", value: `Nëw${tag}` });
      const answer = await scim.call("PATCH", `/Users/${id}`, patch);
      expect(answer.status, answer.text).toBe(200);
      return { now: `new${tag}`, before: `old${tag}` };
    },
  },
  {
    name: "a PUT",
    write: async (scim, tag) => {
      const id = await created(scim, tag, `Öld${tag}`);
      const answer = await scim.call("PUT", `/Users/${id}`, userOf(tag, `Nëw${tag}`));
      expect(answer.status, answer.text).toBe(200);
      return { now: `new${tag}`, before: `old${tag}` };
    },
  },
  {
    name: "a /Bulk create (users import, users sync)",
    write: async (scim, tag) => {
      await bulk(scim, { method: "POST", path: "/Users", data: userOf(tag, `Jösé${tag}`) });
      return { now: `JOSE${tag}` };
    },
  },
  {
    name: "a /Bulk PATCH (users sync)",
    write: async (scim, tag) => {
      const id = await created(scim, tag, `Öld${tag}`);
      const patch = patchOf({ op: "replace", path: "name", value: { givenName: "Pat", familyName: `Nëw${tag}` } });
      await bulk(scim, { method: "PATCH", path: `/Users/${id}`, data: patch });
      return { now: `new${tag}`, before: `old${tag}` };
    },
  },
  {
    name: "a restore of a deleted User",
    write: async (scim, tag) => {
      const id = await created(scim, tag, `Ørsted${tag}`);
      expect((await scim.call("DELETE", `/Users/${id}`)).status).toBe(204);
      expect(await namesFound(scim, `orsted${tag}`)).toEqual([]);
      const answer = await scim.call("POST", `/DeletedUsers/${id}/restore`);
      expect(answer.status, answer.text).toBe(200);
      return { now: `orsted${tag}` };
    },
  },
];

async function namesFound(scim: ScimServer, text: string): Promise<string[]> {
  const answer = await scim.call("GET", `/Resources?resourcetypes=User&search=${encodeURIComponent(text)}`);
  expect(answer.status, answer.text).toBe(200);
  return (answer.json().Resources as { userName: string }[]).map((user) => user.userName);
}

describe.each(DATABASES)("users search after writes on $name", ({ start }) => {
  const scim = useScimServer(start, { retainDeletedDays: 7 });

  it.each(WRITES.map((write, i) => ({ ...write, tag: `t${i}x` })))(
    "$name keeps the search current",
    async ({ write, tag }) => {
      const { now, before } = await write(scim, tag);
      expect(await namesFound(scim, now)).toEqual([`w-${tag}`]);
      if (before !== undefined) expect(await namesFound(scim, before)).toEqual([]);
    },
  );
});
