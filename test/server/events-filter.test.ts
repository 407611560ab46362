import { beforeAll, describe, expect, it } from "vitest";
import { createEvent, problemOf, useTestServer } from "../helpers/server.js";

const EVENTS = "/api/crm/v1/events";

const SEED = [
  {
    code: "WEB-27",
    name: "Launch webinar",
    type: "webinar",
    startsAt: "2027-03-01T15:00:00Z",
    tags: ["Launch", "online"],
    attendees: [
      { name: "Ann", email: "ann@example.com", status: "accepted" },
      { name: "Bob", email: "bob@example.org", status: "declined" },
    ],
    customFields: { budget: 1200, region: "EMEA", recorded: true },
  },
  {
    code: "WEB-26",
    name: "Old webinar",
    type: "Webinar",
    startsAt: "2026-11-01T15:00:00Z",
    tags: ["online"],
    customFields: { budget: 300 },
  },
  {
    code: "MEET-27",
    name: "Board meeting",
    type: "meeting",
    description: "Quarterly",
    startsAt: "2027-01-15T09:00:00+01:00",
    endsAt: "2027-01-15T11:00:00+01:00",
    location: "HQ",
    attendees: [
      { name: "Ann", email: "ann@example.com", status: "declined" },
      { name: "Bob", email: "bob@example.org", status: "accepted" },
    ],
    customFields: { region: "emea" },
  },
  {
    code: "CALL-1",
    name: "Intro call",
    type: "call",
    startsAt: "2027-06-01T08:00:00Z",
    attendees: [{ name: "Cy", email: "cy@example.net" }],
  },
];

describe("events: filter", () => {
  const server = useTestServer();
  const admin = server.call;
  beforeAll(async () => {
    for (const event of SEED) await createEvent(admin, event);
  });

  async function codes(filter: string): Promise<string[]> {
    const response = await admin("GET", `${EVENTS}?pagesize=100&fields=code&filter=${encodeURIComponent(filter)}`);
    expect(response.statusCode, `${filter}: ${response.body.slice(0, 300)}`).toBe(200);
    const body = response.json() as { data: { code: string }[]; total: number };
    expect(body.total).toBe(body.data.length);
    return body.data.map((e) => e.code).sort();
  }

  it.each([
    ['startsAt ge "2027-01-01T00:00:00Z" and type eq "webinar"', ["WEB-27"]],
    ['type eq "WEBINAR"', ["WEB-26", "WEB-27"]],
    // the offset is normalised: 09:00+01:00 is 08:00Z
    ['startsAt eq "2027-01-15T08:00:00Z"', ["MEET-27"]],
    ['startsAt lt "2027-01-15T08:00:00.001Z" and startsAt gt "2026-12-31T23:59:59+00:00"', ["MEET-27"]],
    ['tags eq "launch"', ["WEB-27"]],
    ['tags co "LINE"', ["WEB-26", "WEB-27"]],
    ['not (tags eq "online")', ["CALL-1", "MEET-27"]],
    ['attendees[email eq "ann@example.com" and status eq "accepted"]', ["WEB-27"]],
    // the same two conditions without a value path may hold in different attendees
    ['attendees.email eq "ann@example.com" and attendees.status eq "accepted"', ["MEET-27", "WEB-27"]],
    ['attendees co "example.net"', ["CALL-1"]],
    ["attendees[status pr]", ["MEET-27", "WEB-27"]],
    ['attendees[not (status eq "declined")]', ["CALL-1", "MEET-27", "WEB-27"]],
    ["customFields.budget gt 500", ["WEB-27"]],
    ["customFields.BUDGET le 1200 and customFields.budget ge 300", ["WEB-26", "WEB-27"]],
    ['customFields.region eq "EMEA"', ["MEET-27", "WEB-27"]],
    ["customFields.recorded eq true", ["WEB-27"]],
    ["customFields.budget pr", ["WEB-26", "WEB-27"]],
    ['customFields.budget eq "1200"', []],
    ["description pr", ["MEET-27"]],
    ["endsAt pr", ["MEET-27"]],
    ["description eq null", ["CALL-1", "WEB-26", "WEB-27"]],
    ['description ne "quarterly"', ["CALL-1", "WEB-26", "WEB-27"]],
    ['not (location eq "HQ")', ["CALL-1", "WEB-26", "WEB-27"]],
    ['location ne "elsewhere"', ["CALL-1", "MEET-27", "WEB-26", "WEB-27"]],
    ['code sw "web-"', ["WEB-26", "WEB-27"]],
    ['name co "webinar" or type eq "call" and startsAt gt "2027-05-01T00:00:00Z"', ["CALL-1", "WEB-26", "WEB-27"]],
    ['createdBy eq "ada.admin"', ["CALL-1", "MEET-27", "WEB-26", "WEB-27"]],
  ])("%s", async (filter, expected) => {
    expect(await codes(filter)).toEqual([...expected].sort());
  });

  it("combines the filter with order and paging", async () => {
    const response = await admin("GET", `${EVENTS}?filter=${encodeURIComponent("tags pr")}&order=-startsAt&pagesize=1`);
    expect(response.json()).toMatchObject({ data: [{ code: "WEB-27" }], total: 2, totalPages: 2 });
  });

  it.each([
    'nosuchfield eq "x"',
    "customFields eq 1",
    "customFields.a.b eq 1",
    'attendees.phone eq "1"',
    'tags[value eq "x"]',
    'attendees[phone eq "1"]',
    'startsAt gt "soon"',
    "type eq 'webinar'",
    '(type eq "webinar"',
    `${"not ".repeat(2000)}type eq "x"`,
  ])("refuses %j with 400 invalid_filter", async (filter) => {
    const response = await admin("GET", `${EVENTS}?filter=${encodeURIComponent(filter)}`);
    problemOf(response, 400, "invalid_filter");
  });

  it.each([
    ["startsAt gt 5", "startsAt needs an RFC 3339 date-time, not 5."],
    ['allDay eq "yes"', `'allDay' is true or false, not "yes".`],
    ['version gt "2"', `'version' is a number, not "2".`],
    ["name eq 3", "'name' is text: compare it with a quoted string, not 3."],
  ])("refuses %j, a comparison that could match nothing, naming the field's kind", async (filter, message) => {
    const response = await admin("GET", `${EVENTS}?filter=${encodeURIComponent(filter)}`);
    expect(problemOf(response, 400, "invalid_filter").detail).toBe(message);
  });

  it("treats SQL metacharacters as data", async () => {
    expect(await codes(`name eq "x' or 1=1 --"`)).toEqual([]);
    expect(await codes(`customFields.region eq "x') or 1=1 --"`)).toEqual([]);
    expect((await admin("GET", EVENTS)).json().total).toBe(SEED.length);
  });
});
