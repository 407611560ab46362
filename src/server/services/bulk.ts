import { TypeCompiler } from "@sinclair/typebox/compiler";
import { BULK_MAX_OPERATIONS, BULK_URN } from "../../contract/bulk.js";
import { RESOURCES_PATH } from "../../contract/resources.js";
import { PatchRequest } from "../../contract/scim.js";
import { USERS_PATH } from "../../contract/scim-users.js";
import { ProblemError } from "../problem-error.js";
import { refreshStatisticsAfterGrowth } from "../store/resources-repo.js";
import type { BulkOperation, BulkResult } from "./bulk-operation.js";
import { parsePath, referencesOf, resolved, type Target } from "./bulk-paths.js";
import { updatedTogether, updateRunOf, writeUpdatesTogether } from "./bulk-updates.js";
import { sendInvitation } from "./invitations.js";
import { type PatchRequest as PatchRequestBody, patchResource } from "./resource-patch.js";
import { createResource, createResources, deleteResource, replaceResource } from "./resources.js";
import { createUser, deleteUser, fromScimUser, patchUser, replaceUser } from "./scim-users.js";
import type { Principal, ServiceContext } from "./service-context.js";
import { SHARED_COMMIT_LENGTH, SharedCommits } from "./shared-commits.js";

type Attributes = Record<string, unknown>;

function failure(operation: BulkOperation, error: ProblemError): BulkResult {
  return {
    method: operation.method,
    ...(operation.bulkId !== undefined && { bulkId: operation.bulkId }),
    status: String(error.status),
    response: {
      schemas: [BULK_URN.error],
      status: String(error.status),
      ...(error.extra.scimType && { scimType: error.extra.scimType }),
      detail: error.detail,
      code: error.code,
      ...(error.errors && { errors: error.errors }),
    },
  };
}

function dataOf(operation: BulkOperation, target: Target): Attributes {
  const data = operation.data;
  if (data === null || typeof data !== "object" || Array.isArray(data)) {
    throw new ProblemError("validation_failed", `A ${operation.method} operation needs its resource as 'data'.`, {
      scimType: "invalidSyntax",
    });
  }
  // /Users is the collection of one type: its operations need not name it
  return target.type && (data as Attributes).resourceType === undefined
    ? { resourceType: target.type, ...(data as Attributes) }
    : (data as Attributes);
}

const patchRequest = TypeCompiler.Compile(PatchRequest);

/** The PatchOp message a PATCH operation carries as its data (RFC 7644 section 3.7). */
function patchOf(operation: BulkOperation): PatchRequestBody {
  if (!patchRequest.Check(operation.data)) {
    const [first] = patchRequest.Errors(operation.data);
    throw new ProblemError(
      "validation_failed",
      `A PATCH operation needs a PatchOp message as 'data'${first ? `: ${first.path || "/"} ${first.message}` : ""}.`,
      {
        scimType: "invalidSyntax",
      },
    );
  }
  return operation.data;
}

/**
 * A create without a password: hashing one (argon2id, the slowest step of a create) inside the
 * shared transaction would keep every other writer waiting for it. A password is only the core
 * attribute at the top level (an extension's is refused), in any case, as /Users reads names.
 */
function sharesCommit(operation: BulkOperation): boolean {
  if (operation.method.toUpperCase() !== "POST" || !/^\/(Resources|Users)$/.test(operation.path)) return false;
  const data = operation.data;
  return (
    data !== null && typeof data === "object" && !Object.keys(data).some((key) => key.toLowerCase() === "password")
  );
}

/**
 * A create written with the creates beside it (createResources): one that shares a commit, with a
 * bulkId, and that refers to no other operation (what it refers to must be written first).
 */
function writtenTogether(operation: BulkOperation, refs: Set<string>): boolean {
  return sharesCommit(operation) && operation.bulkId !== undefined && refs.size === 0;
}

/** A run of such creates, written together in the shared commit; each its own result, as execute() gives it. */
async function executeRun(
  commits: SharedCommits,
  principal: Principal,
  run: BulkOperation[],
): Promise<(BulkResult | ProblemError)[]> {
  const ctx = await commits.contextFor(true, run.length);
  const results: (BulkResult | ProblemError)[] = [];
  const written: number[] = [];
  const bodies: Attributes[] = [];
  for (const [i, operation] of run.entries()) {
    try {
      const target = parsePath(operation.path);
      // /Users takes SCIM's representation of a User, as POST /Users does
      bodies.push(target.type === "User" ? fromScimUser(dataOf(operation, target)) : dataOf(operation, target));
      written.push(i);
    } catch (error) {
      if (!(error instanceof ProblemError)) throw error;
      results[i] = error;
    }
  }
  const outcomes = await createResources(ctx, principal, bodies);
  outcomes.forEach((outcome, k) => {
    const i = written[k] as number;
    const operation = run[i] as BulkOperation;
    const collection = parsePath(operation.path).type === "User" ? USERS_PATH : RESOURCES_PATH;
    results[i] =
      outcome instanceof ProblemError
        ? outcome
        : {
            method: "POST",
            bulkId: operation.bulkId,
            location: `${ctx.publicUrl ?? ""}${collection}/${outcome.id}`,
            version: outcome.etag,
            status: "201",
          };
  });
  return results;
}

/** One operation, exactly as its single request would run it. */
async function execute(ctx: ServiceContext, principal: Principal, operation: BulkOperation): Promise<BulkResult> {
  const method = operation.method.toUpperCase();
  const target = parsePath(operation.path);
  const head = { method, ...(operation.bulkId !== undefined && { bulkId: operation.bulkId }) };
  if (method === "POST" && target.id === undefined) {
    if (operation.bulkId === undefined) {
      throw new ProblemError("validation_failed", "A POST operation needs a bulkId (RFC 7644 section 3.7).", {
        scimType: "invalidSyntax",
      });
    }
    // /Users takes SCIM's representation of a User, as POST /Users does
    const created =
      target.type === "User"
        ? await createUser(ctx, principal, dataOf(operation, target))
        : await createResource(ctx, principal, dataOf(operation, target));
    return { ...head, location: `${ctx.publicUrl ?? ""}${created.location}`, version: created.etag, status: "201" };
  }
  if (method === "POST" && target.id !== undefined && target.invitation) {
    const sent = await sendInvitation(ctx, principal, target.id);
    return { ...head, location: `${ctx.publicUrl ?? ""}/Resources/${target.id}`, status: "202", response: sent };
  }
  // a bulk operation's version is its If-Match (RFC 7644 section 3.7)
  const preconditions = { ifMatch: operation.version };
  if (target.id !== undefined && !target.invitation && method === "PUT") {
    const data = dataOf(operation, target);
    const replaced =
      target.type === "User"
        ? await replaceUser(ctx, principal, target.id, data, preconditions)
        : await replaceResource(ctx, principal, target.id, data, preconditions);
    const meta = replaced.body.meta as { location: string };
    return { ...head, location: meta.location, version: replaced.etag, status: "200" };
  }
  if (target.id !== undefined && !target.invitation && method === "PATCH") {
    const request = patchOf(operation);
    const patched =
      target.type === "User"
        ? await patchUser(ctx, principal, target.id, request, preconditions)
        : await patchResource(ctx, principal, target.id, request, preconditions);
    const meta = patched.body.meta as { location: string };
    return { ...head, location: meta.location, version: patched.etag, status: "200" };
  }
  if (target.id !== undefined && !target.invitation && method === "DELETE") {
    if (target.type === "User") await deleteUser(ctx, principal, target.id, preconditions);
    else await deleteResource(ctx, principal, target.id, preconditions);
    const collection = target.type === "User" ? USERS_PATH : RESOURCES_PATH;
    return { ...head, location: `${ctx.publicUrl ?? ""}${collection}/${target.id}`, status: "204" };
  }
  throw new ProblemError(
    "method_not_allowed",
    `${method} ${operation.path} is not an operation of /Bulk: POST a collection or an invitation, PUT, PATCH or DELETE a resource.`,
  );
}

function assertRequest(schemas: string[], operations: BulkOperation[]): void {
  if (!schemas.includes(BULK_URN.request)) {
    throw new ProblemError("validation_failed", `A bulk request's schemas must include ${BULK_URN.request}.`, {
      errors: [{ path: "/schemas", message: "the BulkRequest schema is missing" }],
      scimType: "invalidSyntax",
    });
  }
  if (operations.length > BULK_MAX_OPERATIONS) {
    throw new ProblemError(
      "payload_too_large",
      `A bulk request may hold at most ${BULK_MAX_OPERATIONS} operations (this one has ${operations.length}); send it in parts.`,
    );
  }
  const seen = new Set<string>();
  operations.forEach((operation, index) => {
    if (operation.bulkId === undefined) return;
    if (seen.has(operation.bulkId)) {
      throw new ProblemError("validation_failed", `The bulkId '${operation.bulkId}' is used twice.`, {
        errors: [{ path: `/Operations/${index}/bulkId`, message: "used by an earlier operation" }],
        scimType: "uniqueness",
      });
    }
    seen.add(operation.bulkId);
  });
}

/**
 * POST /Bulk (RFC 7644 section 3.7). Operations run in the order given, except that one waits
 * for the operations whose bulkId it refers to; one that refers to a bulkId that failed, that no
 * operation declares, or that belongs to a cycle fails with 409. Each operation has the
 * validation, the authorization and the outcome of its single request: a bulk request is not
 * atomic (consecutive creates share a commit, shared-commits.ts, and are written together, and
 * consecutive PATCHes share one, bulk-updates.ts, but not their failures). With failOnErrors, processing stops at that many failures and the
 * operations not run are absent from the answer.
 */
export async function runBulk(
  ctx: ServiceContext,
  principal: Principal,
  request: { schemas: string[]; failOnErrors?: number; Operations: BulkOperation[] },
) {
  const operations = request.Operations;
  assertRequest(request.schemas, operations);
  const declared = new Set(operations.flatMap((o) => (o.bulkId === undefined ? [] : [o.bulkId])));
  const ids = new Map<string, string>();
  const failedIds = new Set<string>();
  const results: (BulkResult | undefined)[] = [];
  let errors = 0;
  const stopped = () => request.failOnErrors !== undefined && errors >= request.failOnErrors;
  const record = (index: number, operation: BulkOperation, result: BulkResult) => {
    results[index] = result;
    if (Number(result.status) >= 400) {
      errors++;
      if (operation.bulkId !== undefined) failedIds.add(operation.bulkId);
    }
  };
  let waiting = operations.map((operation, index) => ({ operation, index, refs: referencesOf(operation) }));
  const commits = new SharedCommits(ctx);
  const settle = (item: (typeof waiting)[number], result: BulkResult) => {
    record(item.index, item.operation, result);
    if (result.status === "201" && item.operation.bulkId !== undefined && result.location) {
      ids.set(item.operation.bulkId, result.location.slice(result.location.lastIndexOf("/") + 1));
    }
  };
  // consecutive creates are written together, up to a shared commit's length; whatever comes
  // after them waits until they are (with failOnErrors, each runs alone: the count decides)
  let run: typeof waiting = [];
  // consecutive updates share a commit likewise, each run as its single request would run it
  let updates: typeof waiting = [];
  const writeUpdates = async () => {
    const writing = updates;
    updates = [];
    if (writing.length === 0) return;
    const operations = writing.map((item) => item.operation);
    const results = await writeUpdatesTogether(
      commits,
      updateRunOf(operations, async (ctx, operation) => {
        try {
          return await execute(ctx, principal, operation);
        } catch (error) {
          if (!(error instanceof ProblemError)) throw error;
          return failure(operation, error);
        }
      }),
      request.failOnErrors === undefined ? Number.POSITIVE_INFINITY : request.failOnErrors - errors,
    );
    for (const [i, result] of results.entries()) settle(writing[i] as (typeof writing)[number], result);
  };
  const writeRun = async () => {
    const writing = run;
    run = [];
    if (writing.length === 0) return;
    const results = await executeRun(
      commits,
      principal,
      writing.map((item) => item.operation),
    );
    writing.forEach((item, i) => {
      const result = results[i] as BulkResult | ProblemError;
      settle(item, result instanceof ProblemError ? failure(item.operation, result) : result);
    });
  };
  try {
    let progressed = true;
    while (waiting.length > 0 && progressed && !stopped()) {
      progressed = false;
      const next: typeof waiting = [];
      for (const item of waiting) {
        if (stopped()) break;
        if (request.failOnErrors === undefined && writtenTogether(item.operation, item.refs)) {
          await writeUpdates();
          run.push(item);
          if (run.length >= SHARED_COMMIT_LENGTH) await writeRun();
          progressed = true;
          continue;
        }
        if (updatedTogether(item.operation, item.refs)) {
          await writeRun();
          updates.push(item);
          if (updates.length >= SHARED_COMMIT_LENGTH) await writeUpdates();
          progressed = true;
          continue;
        }
        await writeRun();
        await writeUpdates();
        // the updates just written may have met failOnErrors
        if (stopped()) break;
        const unresolvable = [...item.refs].find((ref) => failedIds.has(ref) || !declared.has(ref));
        if (unresolvable !== undefined) {
          const why = failedIds.has(unresolvable) ? "its operation failed" : "no operation of this request declares it";
          record(
            item.index,
            item.operation,
            failure(
              item.operation,
              new ProblemError("conflict", `The bulkId '${unresolvable}' cannot be resolved: ${why}.`, {
                scimType: "invalidValue",
              }),
            ),
          );
          progressed = true;
        } else if ([...item.refs].every((ref) => ids.has(ref))) {
          let result: BulkResult;
          try {
            const operation = resolved(item.operation, ids);
            result = await execute(await commits.contextFor(sharesCommit(operation)), principal, operation);
          } catch (error) {
            if (!(error instanceof ProblemError)) throw error;
            result = failure(item.operation, error);
          }
          settle(item, result);
          progressed = true;
        } else {
          next.push(item);
        }
      }
      await writeRun();
      await writeUpdates();
      waiting = progressed ? next : waiting;
    }
    // what is still waiting refers, through others, to itself
    for (const item of waiting) {
      if (stopped()) break;
      record(
        item.index,
        item.operation,
        failure(
          item.operation,
          new ProblemError("conflict", "Its bulkId references form a cycle, which this server cannot resolve.", {
            scimType: "invalidValue",
          }),
        ),
      );
    }
    await commits.commit();
  } finally {
    await commits.abandon();
  }
  // an import sends its users in many requests: the planner learns of them as they come
  if (results.some((result) => result?.status === "201")) {
    await refreshStatisticsAfterGrowth(ctx.store.db, ctx.store.dialect);
  }
  return {
    schemas: [BULK_URN.response],
    Operations: results.filter((result): result is BulkResult => result !== undefined),
  };
}
