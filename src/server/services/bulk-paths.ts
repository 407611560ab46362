import { BULK_ID_PREFIX } from "../../contract/bulk.js";
import { invalid, ProblemError } from "../problem-error.js";
import type { BulkOperation } from "./bulk-operation.js";

// The path a bulk operation names, and the bulkIds it refers to (RFC 7644 section 3.7.2).

/** A path of the operation: the collection, one resource, or one resource's invitation. */
export interface Target {
  type?: "User";
  id?: string;
  invitation?: boolean;
}

const PATH = /^\/(Resources|Users)(?:\/([^/]+)(\/invitation)?)?$/;

function decodedId(segment: string, path: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    throw invalid(`The id in '${path}' does not decode as UTF-8.`, "/path", "invalidPath");
  }
}

export function parsePath(path: string): Target {
  const match = PATH.exec(path);
  if (!match) {
    throw new ProblemError(
      "not_found",
      `'${path}' is not a path a bulk operation may write: /Resources, /Resources/{id} or /Resources/{id}/invitation.`,
    );
  }
  return {
    ...(match[1] === "Users" && { type: "User" as const }),
    ...(match[2] !== undefined && { id: decodedId(match[2], path) }),
    ...(match[3] !== undefined && { invitation: true }),
  };
}

/** Every `bulkId:…` the operation refers to, in its path or anywhere in its data. */
export function referencesOf(operation: BulkOperation): Set<string> {
  const found = new Set<string>();
  const visit = (value: unknown): void => {
    if (typeof value === "string") {
      if (value.startsWith(BULK_ID_PREFIX)) found.add(value.slice(BULK_ID_PREFIX.length));
    } else if (Array.isArray(value)) value.forEach(visit);
    else if (value && typeof value === "object") Object.values(value).forEach(visit);
  };
  visit(operation.data);
  for (const segment of operation.path.split("/")) visit(decodeURIComponentSafe(segment));
  return found;
}

function decodeURIComponentSafe(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

/** The operation with each `bulkId:…` replaced by the id of the resource it created. */
export function resolved(operation: BulkOperation, ids: Map<string, string>): BulkOperation {
  const swap = (value: unknown): unknown => {
    if (typeof value === "string") {
      return value.startsWith(BULK_ID_PREFIX) ? (ids.get(value.slice(BULK_ID_PREFIX.length)) ?? value) : value;
    }
    if (Array.isArray(value)) return value.map(swap);
    if (value && typeof value === "object") {
      return Object.fromEntries(Object.entries(value).map(([key, inner]) => [key, swap(inner)]));
    }
    return value;
  };
  const path = operation.path
    .split("/")
    .map((segment) => {
      const swapped = swap(decodeURIComponentSafe(segment));
      return swapped === decodeURIComponentSafe(segment) ? segment : encodeURIComponent(String(swapped));
    })
    .join("/");
  return { ...operation, path, ...(operation.data !== undefined && { data: swap(operation.data) }) };
}
