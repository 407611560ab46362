/** What a table shows of a record; every field goes to JSON, NDJSON and CSV. */
export const AUDIT_COLUMNS = [
  "time",
  "action",
  "outcome",
  "actor.userName",
  "target.type",
  "target.name",
  "clientIp",
  "id",
];

export const AUDIT_CSV_COLUMNS = [
  "id",
  "time",
  "action",
  "outcome",
  "actor.id",
  "actor.userName",
  "actor.consumerId",
  "actor.apiTokenId",
  "actor.apiTokenName",
  "target.type",
  "target.id",
  "target.name",
  "requestId",
  "clientIp",
  "userAgent",
];
