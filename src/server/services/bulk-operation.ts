/** One operation of a /Bulk request, and what it answered: the shapes the bulk files share. */
export interface BulkOperation {
  method: string;
  path: string;
  bulkId?: string;
  version?: string;
  data?: unknown;
}

export interface BulkResult {
  method: string;
  bulkId?: string;
  location?: string;
  version?: string;
  status: string;
  response?: unknown;
}
