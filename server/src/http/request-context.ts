import { randomUUID } from 'node:crypto';
import type { OrganizationContext } from './organization-context.js';
import type { RequestLog } from './logging.js';
import type { Stage } from './pipeline.js';

declare global {
  // eslint-disable-next-line @typescript-eslint/no-namespace -- Express's types declare Request in the global namespace Express: adding a field is merging into it
  namespace Express {
    interface Request {
      /** Request id: the incoming X-Request-Id when sane, else a new UUID; on every log line. */
      requestId: string;
      /** Logs bound to this request's id (http/logging.ts). */
      log: RequestLog;
      /** The organization of the authenticated API key (merchant routes only). */
      organization?: OrganizationContext;
      /** process.hrtime.bigint() when the request entered the pipeline (http/pipeline.ts). */
      startedNs: bigint;
      /** The route's pattern, when the lane knows it before answering (the hot lane). */
      routePattern?: string;
    }
  }
}

export function requireOrganization(req: { organization?: OrganizationContext }): OrganizationContext {
  if (!req.organization) throw new Error('route reached without authentication');
  return req.organization;
}

const REQUEST_ID_PATTERN = /^[A-Za-z0-9._:-]{1,128}$/;

/** The client's X-Request-Id when it is sane (echoed, logged), else a new UUID. */
export function requestIdFrom(incoming: string | string[] | undefined): string {
  return typeof incoming === 'string' && REQUEST_ID_PATTERN.test(incoming) ? incoming : randomUUID();
}

/** The first stage: the request's id (echoed in X-Request-Id) and the time it arrived. */
export const requestIdStage: Stage = {
  name: 'request id',
  run(req, _res, headers) {
    req.startedNs = process.hrtime.bigint();
    req.requestId = requestIdFrom(req.headers['x-request-id']);
    headers.setHeader('X-Request-Id', req.requestId);
  },
};
