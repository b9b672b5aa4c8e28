/** The client's calls of /process/bulk (WfxClient.bulk): bulk operations over a query. */
import type {
  BulkDryRun,
  BulkListQuery,
  BulkPage,
  BulkRequest,
  BulkResultPage,
  BulkResultsQuery,
  BulkView,
} from '../shared/api/index.js';
import { path, withQuery, type ApiClient } from './http.js';

/** The bulk calls of `client` (its transport read at each call: it is set after this is made). */
export function bulkCalls(client: { readonly http: ApiClient }) {
  return {
    /**
     * POST /process/bulk with `dryRun`: how many executions the operation would select, and a
     * sample, changing nothing. Throws FORBIDDEN, PROCESS_NOT_FOUND, VALIDATION_ERROR.
     */
    dryRun: (body: BulkRequest): Promise<BulkDryRun> =>
      client.http.post<BulkDryRun>('/process/bulk', { ...body, dryRun: true }),
    /**
     * POST /process/bulk: creates the operation (its selection fixed now) and starts it. Throws
     * FORBIDDEN, PROCESS_NOT_FOUND, VALIDATION_ERROR, BULK_TOO_LARGE, BULK_LIMIT_EXCEEDED.
     */
    create: (body: BulkRequest): Promise<BulkView> => {
      const { dryRun: _dryRun, sample: _sample, ...create } = body;
      return client.http.post<BulkView>('/process/bulk', create);
    },
    /** GET /process/bulk: operations, newest first. */
    list: (query: BulkListQuery = {}): Promise<BulkPage> =>
      client.http.get<BulkPage>(withQuery('/process/bulk', query)),
    /** GET /process/bulk/{bulkId}: one with its progress. Throws BULK_NOT_FOUND. */
    get: (bulkId: string): Promise<BulkView> => client.http.get<BulkView>(path`/process/bulk/${bulkId}`),
    /** GET /process/bulk/{bulkId}/results: a page of its results so far, newest execution first. Throws BULK_NOT_FOUND. */
    results: (bulkId: string, query: BulkResultsQuery = {}): Promise<BulkResultPage> =>
      client.http.get<BulkResultPage>(withQuery(path`/process/bulk/${bulkId}/results`, query)),
    /** POST /process/bulk/{bulkId}/cancel. Throws BULK_NOT_FOUND, BULK_NOT_RUNNING. */
    cancel: (bulkId: string): Promise<BulkView> => client.http.post<BulkView>(path`/process/bulk/${bulkId}/cancel`),
  };
}
