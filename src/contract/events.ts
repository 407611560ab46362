import { type Static, Type } from "@sinclair/typebox";
import { Nullable, QueryInteger, Timestamp } from "./common.js";
import { routeAccess } from "./policy/operations.js";
import { defineRoute } from "./route.js";

export const EVENT_CODE_PATTERN = "^[A-Za-z0-9._-]{1,64}$";
export const EVENTS_PATH = "/api/crm/v1/events";
export const EVENT_PAGE_SIZE = { default: 20, max: 100 } as const;
export const CUSTOM_FIELDS_MAX_BYTES = 16 * 1024;

/** Fields a list may be ordered by (`order=-startsAt,name`). */
export const EVENT_SORTABLE_FIELDS = [
  "code",
  "name",
  "type",
  "startsAt",
  "endsAt",
  "allDay",
  "location",
  "organizer",
  "createdAt",
  "updatedAt",
  "createdBy",
] as const;

export const EVENT_FIELDS = [
  "code",
  "name",
  "description",
  "type",
  "startsAt",
  "endsAt",
  "allDay",
  "location",
  "organizer",
  "attendees",
  "tags",
  "customFields",
  "createdAt",
  "updatedAt",
  "createdBy",
  "version",
] as const;

export const EVENT_READ_ONLY_FIELDS = ["createdAt", "updatedAt", "createdBy", "version"] as const;

const Attendee = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 200 }),
    email: Type.String({ format: "email", maxLength: 320 }),
    status: Type.Optional(
      Type.Union([
        Type.Literal("needs-action"),
        Type.Literal("accepted"),
        Type.Literal("declined"),
        Type.Literal("tentative"),
      ]),
    ),
  },
  { additionalProperties: false },
);

const readOnlyInput = {
  createdAt: Type.Optional(Type.Unknown({ description: "read-only; ignored on input" })),
  updatedAt: Type.Optional(Type.Unknown({ description: "read-only; ignored on input" })),
  createdBy: Type.Optional(Type.Unknown({ description: "read-only; ignored on input" })),
  version: Type.Optional(Type.Unknown({ description: "read-only; ignored on input" })),
};

const mutableFields = {
  name: Type.String({ minLength: 1, maxLength: 200 }),
  description: Type.Optional(Nullable(Type.String({ maxLength: 10000 }))),
  type: Type.Optional(Nullable(Type.String({ minLength: 1, maxLength: 64 }))),
  startsAt: Timestamp,
  endsAt: Type.Optional(Nullable(Timestamp)),
  allDay: Type.Optional(Nullable(Type.Boolean())),
  location: Type.Optional(Nullable(Type.String({ maxLength: 500 }))),
  organizer: Type.Optional(Nullable(Type.String({ maxLength: 200 }))),
  attendees: Type.Optional(Nullable(Type.Array(Attendee, { maxItems: 1000 }))),
  tags: Type.Optional(Nullable(Type.Array(Type.String({ minLength: 1, maxLength: 64 }), { maxItems: 50 }))),
  customFields: Type.Optional(Nullable(Type.Object({}, { additionalProperties: true }))),
};

/** Body of create and of the full-replacement update. */
export const EventInput = Type.Object(
  {
    code: Type.Optional(Type.String({ pattern: EVENT_CODE_PATTERN })),
    ...mutableFields,
    ...readOnlyInput,
  },
  { additionalProperties: false },
);

/** An event as returned; with `fields` only `code` is certain to be present. */
export const Event = Type.Object({
  code: Type.String(),
  name: Type.Optional(Type.String()),
  description: Type.Optional(Type.String()),
  type: Type.Optional(Type.String()),
  startsAt: Type.Optional(Type.String()),
  endsAt: Type.Optional(Type.String()),
  allDay: Type.Optional(Type.Boolean()),
  location: Type.Optional(Type.String()),
  organizer: Type.Optional(Type.String()),
  attendees: Type.Optional(
    Type.Array(Type.Object({ name: Type.String(), email: Type.String(), status: Type.Optional(Type.String()) })),
  ),
  tags: Type.Optional(Type.Array(Type.String())),
  customFields: Type.Optional(Type.Object({}, { additionalProperties: true })),
  createdAt: Type.Optional(Type.String()),
  updatedAt: Type.Optional(Type.String()),
  createdBy: Type.Optional(Type.String()),
  version: Type.Optional(Type.Integer()),
});

const order = Type.String({
  maxLength: 512,
  description: "comma-separated fields, `-` for descending; default startsAt,code",
});
const page = QueryInteger({ minimum: 1, description: "1-based page number, default 1" });
const pagesize = QueryInteger({
  minimum: 1,
  maximum: EVENT_PAGE_SIZE.max,
  description: `page size, default ${EVENT_PAGE_SIZE.default}`,
});
const fields = Type.String({
  maxLength: 1024,
  description: "comma-separated subset of fields; code is always returned",
});

/** The query of the list. */
export const EventListQuery = Type.Object(
  {
    order: Type.Optional(order),
    page: Type.Optional(page),
    pagesize: Type.Optional(pagesize),
    fields: Type.Optional(fields),
    filter: Type.Optional(Type.String({ maxLength: 65536, description: "SCIM filter expression over event fields" })),
    cursor: Type.Optional(
      Type.String({
        maxLength: 4096,
        description:
          "opaque position from the Link `next` of the previous page (same order, filter and pagesize); such a page has no total",
      }),
    ),
  },
  { additionalProperties: false },
);

/**
 * The query of an operation on one event (a create, a read, a replace, a delete): `fields` shapes
 * the event answered; `order`, `page` and `pagesize` are checked as the list checks them, and
 * ignored (spec 1.4). A list's `filter` and `cursor` are not among them.
 */
export const EventQuery = Type.Object(
  {
    order: Type.Optional(order),
    page: Type.Optional(page),
    pagesize: Type.Optional(pagesize),
    fields: Type.Optional(fields),
  },
  { additionalProperties: false },
);

const CodeParams = Type.Object({ code: Type.String({ maxLength: 256 }) });

export const listEvents = defineRoute({
  id: "events.list",
  method: "GET",
  path: EVENTS_PATH,
  summary: "List events, one page at a time",
  tags: ["events"],
  access: routeAccess("events:read"),
  query: EventListQuery,
  queryNamesAnyCase: true,
  responses: {
    200: Type.Object({
      data: Type.Array(Event),
      page: Type.Integer(),
      pagesize: Type.Integer(),
      // left out on a page reached by `cursor`: counting would scan what the cursor skips
      total: Type.Optional(Type.Integer()),
      totalPages: Type.Optional(Type.Integer()),
    }),
  },
});

export const getEvent = defineRoute({
  id: "events.get",
  method: "GET",
  path: `${EVENTS_PATH}/:code`,
  summary: "Read one event",
  tags: ["events"],
  access: routeAccess("events:read"),
  etag: true,
  params: CodeParams,
  query: EventQuery,
  queryNamesAnyCase: true,
  responses: { 200: Event },
});

export const createEvent = defineRoute({
  id: "events.create",
  method: "POST",
  path: EVENTS_PATH,
  summary: "Register a new event",
  tags: ["events"],
  access: routeAccess("events:write"),
  errors: ["conflict"],
  etag: true,
  query: EventQuery,
  queryNamesAnyCase: true,
  body: EventInput,
  responses: { 201: Event },
});

export const updateEvent = defineRoute({
  id: "events.update",
  method: "PUT",
  path: `${EVENTS_PATH}/:code`,
  summary: "Replace the mutable fields of an event (honours If-Match)",
  tags: ["events"],
  access: routeAccess("events:write"),
  errors: ["conflict"],
  etag: true,
  params: CodeParams,
  query: EventQuery,
  queryNamesAnyCase: true,
  body: EventInput,
  responses: { 200: Event },
});

export const deleteEvent = defineRoute({
  id: "events.delete",
  method: "DELETE",
  path: `${EVENTS_PATH}/:code`,
  summary: "Delete an event (honours If-Match)",
  tags: ["events"],
  access: routeAccess("events:write"),
  etag: true,
  params: CodeParams,
  query: EventQuery,
  queryNamesAnyCase: true,
  responses: { 204: null },
});

/** At most this many events in one batch request (and the body stays under the server's body limit). */
export const EVENT_BATCH_MAX = 1000;
export const EVENTS_BATCH_PATH = `${EVENTS_PATH}/batch`;
export const EVENT_IMPORTS_PATH = `${EVENTS_PATH}/imports`;
/** An atomic import not committed within this time is dropped with what it staged. */
export const EVENT_IMPORT_TTL_HOURS = 24;

const OnConflict = Type.Union([Type.Literal("fail"), Type.Literal("skip"), Type.Literal("update")], {
  description:
    "an event whose code exists (or came earlier in the same import): fail it, skip it, or update it by code",
});

const ItemProblem = Type.Object({
  code: Type.String({ description: "the problem code a single create would answer: validation_failed, conflict" }),
  detail: Type.String(),
  errors: Type.Optional(Type.Array(Type.Object({ path: Type.String(), message: Type.String() }))),
});

export type BatchItemProblem = Static<typeof ItemProblem>;

const ItemResult = Type.Object({
  index: Type.Integer({ description: "0-based position of the item in the request" }),
  ref: Type.Optional(Type.Integer({ description: "the caller's reference of the item, echoed" })),
  status: Type.Union([
    Type.Literal("created"),
    Type.Literal("updated"),
    Type.Literal("skipped"),
    Type.Literal("failed"),
    Type.Literal("staged"),
  ]),
  code: Type.Optional(Type.String()),
  problem: Type.Optional(ItemProblem),
});

const Counts = {
  created: Type.Integer(),
  updated: Type.Integer(),
  skipped: Type.Integer(),
  failed: Type.Integer(),
};

export const BatchResult = Type.Object({
  ...Counts,
  staged: Type.Optional(Type.Integer()),
  dryRun: Type.Boolean(),
  results: Type.Array(ItemResult),
});

export const batchEvents = defineRoute({
  id: "events.batch",
  method: "POST",
  path: EVENTS_BATCH_PATH,
  summary: `Create, skip or update up to ${EVENT_BATCH_MAX} events in one transaction, with a result per item`,
  tags: ["events"],
  access: routeAccess("events:write"),
  errors: ["not_found", "conflict", "quota_exceeded"],
  body: Type.Object(
    {
      items: Type.Array(Type.Unknown({ description: "an event as `events.create` takes it" }), {
        maxItems: EVENT_BATCH_MAX,
      }),
      refs: Type.Optional(
        Type.Array(Type.Integer(), {
          maxItems: EVENT_BATCH_MAX,
          description: "the caller's reference of each item (a line number), echoed in its result",
        }),
      ),
      onConflict: Type.Optional(OnConflict),
      dryRun: Type.Optional(
        Type.Boolean({ description: "answer what would happen, in a transaction rolled back: nothing is written" }),
      ),
      import: Type.Optional(
        Type.String({
          maxLength: 64,
          description: "an atomic import (events.imports.start): validate and stage the items, write nothing yet",
        }),
      ),
    },
    { additionalProperties: false },
  ),
  responses: { 200: BatchResult },
});

export const EVENT_DELETIONS_PATH = `${EVENTS_PATH}/deletions`;

export const deleteEvents = defineRoute({
  id: "events.deletions",
  method: "POST",
  path: EVENT_DELETIONS_PATH,
  summary: `Delete up to ${EVENT_BATCH_MAX} events by code in one transaction, each audited as its single delete; a code that names no event is told, not a failure`,
  tags: ["events"],
  access: routeAccess("events:write"),
  body: Type.Object(
    {
      codes: Type.Array(Type.String({ pattern: EVENT_CODE_PATTERN }), { minItems: 1, maxItems: EVENT_BATCH_MAX }),
    },
    { additionalProperties: false },
  ),
  responses: {
    200: Type.Object({
      deleted: Type.Integer(),
      notFound: Type.Integer(),
      results: Type.Array(
        Type.Object({
          code: Type.String(),
          status: Type.Union([Type.Literal("deleted"), Type.Literal("not_found")]),
        }),
      ),
    }),
  },
});

const ImportParams = Type.Object({ id: Type.String({ maxLength: 64 }) });

export const startEventImport = defineRoute({
  id: "events.imports.start",
  method: "POST",
  path: EVENT_IMPORTS_PATH,
  summary: "Open an atomic import: batches staged into it are written all together, or not at all, at its commit",
  tags: ["events"],
  access: routeAccess("events:write"),
  errors: ["quota_exceeded"],
  body: Type.Object({ onConflict: Type.Optional(OnConflict) }, { additionalProperties: false }),
  responses: { 201: Type.Object({ id: Type.String(), expiresAt: Type.String() }) },
});

export const commitEventImport = defineRoute({
  id: "events.imports.commit",
  method: "POST",
  path: `${EVENT_IMPORTS_PATH}/:id/commit`,
  summary: "Write every staged event in one transaction; on any failure write none, and answer the failures",
  tags: ["events"],
  access: routeAccess("events:write"),
  errors: ["conflict"],
  params: ImportParams,
  body: Type.Object(
    { dryRun: Type.Optional(Type.Boolean({ description: "check the whole import, then roll it back" })) },
    { additionalProperties: false },
  ),
  responses: {
    200: Type.Object({
      ...Counts,
      committed: Type.Boolean(),
      dryRun: Type.Boolean(),
      failures: Type.Array(ItemResult, { description: "the failed items only; `index` is the position in the import" }),
    }),
  },
});

export const abortEventImport = defineRoute({
  id: "events.imports.abort",
  method: "DELETE",
  path: `${EVENT_IMPORTS_PATH}/:id`,
  summary: "Drop an atomic import and what it staged",
  tags: ["events"],
  access: routeAccess("events:write"),
  errors: ["conflict"],
  params: ImportParams,
  responses: { 204: null },
});

export const eventRoutes = [
  listEvents,
  getEvent,
  createEvent,
  updateEvent,
  deleteEvent,
  batchEvents,
  deleteEvents,
  startEventImport,
  commitEventImport,
  abortEventImport,
] as const;
