import type { IncomingMessage } from 'node:http';
import type { ErrorRequestHandler, RequestHandler, Response } from 'express';
import type { Logger } from 'pino';
import { ErrorMessages, type ErrorBody } from '@affiliate-attribution/contract';
import { DomainError, type DomainErrorKind } from '../domain-errors.js';
import { HttpError } from './errors.js';
import { declaredBodyLength } from './security.js';
import { echoInput } from './validation-message.js';
import { databaseTimeoutOf, isDatabaseUnavailable } from '../db/sql.js';

/** A refused body up to this size is read off and discarded, so the connection serves the client's next request. */
const DRAIN_MAX_BYTES = 64 * 1024;

/**
 * Whether an answer given now must close the connection: the request was refused from its headers
 * (no key, a declared length over the limit, ...) while a large body (or a chunked one, of unknown
 * length) is still to come. Kept alive, Node would read all of it, however large, before the
 * connection could serve another request; with `Connection: close`, node:http ends the connection
 * once the answer is written and then destroys the socket, so it is never left half-open. Small
 * bodies are drained instead: cheaper than a new connection, and the answer does not depend on
 * whether their last bytes happened to arrive before it. Both lanes ask this before answering.
 */
export function mustCloseForUnreadBody(req: IncomingMessage): boolean {
  if (req.complete) return false;
  return req.headers['transfer-encoding'] !== undefined || declaredBodyLength(req) > DRAIN_MAX_BYTES;
}

export function sendError(res: Response, status: number, message: string, headers: Record<string, string> = {}): void {
  if (res.headersSent) return;
  for (const [name, value] of Object.entries(headers)) res.setHeader(name, value);
  if (mustCloseForUnreadBody(res.req)) res.setHeader('Connection', 'close');
  const body: ErrorBody = { success: false, message };
  res.status(status).json(body);
}

/** Errors of body-parser, keyed by its `type`, in the envelope with the right status. */
const bodyParserErrors: Record<string, [number, string]> = {
  'entity.parse.failed': [400, 'Malformed JSON body'],
  'entity.too.large': [413, 'Request body exceeds the 1 MiB limit'],
  'encoding.unsupported': [415, 'Unsupported content encoding'],
  'charset.unsupported': [415, 'Unsupported charset; send UTF-8 JSON'],
  'request.aborted': [400, 'Request aborted'],
  'request.size.invalid': [400, 'Request size did not match Content-Length'],
  'stream.encoding.set': [500, ErrorMessages.internal],
};

const clientErrorMessages: Record<number, string> = {
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not found',
  405: 'Method not allowed',
  413: 'Request body too large',
  415: 'Unsupported media type',
};

/** The one mapping of the domain's refusals (domain-errors.ts) to HTTP statuses. */
export const domainStatus: Record<DomainErrorKind, number> = {
  'invalid-input': 400,
  'not-found': 404,
  conflict: 409,
  expired: 410,
  'too-large': 413,
};

/** The log line of a statement PostgreSQL cancelled, naming the bound it ran into. */
export const DATABASE_TIMEOUT_LOG = {
  'statement timeout':
    'database statement timeout: PostgreSQL cancelled a statement that ran past statement_timeout (DB_STATEMENT_TIMEOUT_MS)',
  'lock timeout':
    'database lock timeout: PostgreSQL cancelled a statement that waited too long for a lock (lock_timeout)',
} as const;

export interface ErrorResponse {
  status: number;
  message: string;
  headers?: Record<string, string>;
  /** How the error is logged: client errors are not logged; these are. */
  log?: { level: 'warn' | 'error'; msg: string };
}

/**
 * The one mapping from a thrown error to the error envelope: domain errors with their status,
 * body-parser's errors, client errors Express raises, a statement the database cancelled for its
 * duration or lock wait (503, retry), an unavailable database (503, retry), and
 * anything else (500). Both transports use it: Express's error handler below and the hot routes
 * (hot-routes.ts).
 */
export function errorResponse(err: unknown): ErrorResponse {
  if (err instanceof DomainError) return { status: domainStatus[err.kind], message: err.message };
  if (err instanceof HttpError) return { status: err.status, message: err.message, headers: err.headers };
  const type = (err as { type?: unknown })?.type;
  if (typeof type === 'string' && bodyParserErrors[type]) {
    const [status, message] = bodyParserErrors[type];
    return { status, message };
  }
  // Errors Express and its parsers raise with a client status (a malformed %-escape in the path
  // is a URIError with status 400): that status, with a generic message of our own.
  const status =
    (err as { status?: unknown; statusCode?: unknown })?.status ?? (err as { statusCode?: unknown })?.statusCode;
  if (typeof status === 'number' && status >= 400 && status < 500) {
    return {
      status,
      message: status === 400 ? 'Malformed request' : (clientErrorMessages[status] ?? 'Request refused'),
    };
  }
  // Before "unavailable": the database answered, it cancelled the statement for its duration or its wait.
  const timeout = databaseTimeoutOf(err);
  if (timeout) {
    return {
      status: 503,
      message: ErrorMessages.databaseTimeout,
      headers: { 'Retry-After': '1' },
      log: { level: 'warn', msg: DATABASE_TIMEOUT_LOG[timeout] },
    };
  }
  if (isDatabaseUnavailable(err)) {
    return {
      status: 503,
      message: ErrorMessages.databaseUnavailable,
      headers: { 'Retry-After': '1' },
      log: { level: 'warn', msg: 'database unavailable' },
    };
  }
  return { status: 500, message: ErrorMessages.internal, log: { level: 'error', msg: 'unhandled error' } };
}

export function errorHandler(logger: Logger): ErrorRequestHandler {
  return (err, req, res, _next) => {
    if (res.headersSent) {
      // Too late for an error body: cut the connection so the client sees a failure, not a truncated success.
      logger.error({ err, reqId: req.requestId }, 'error after the response started');
      res.destroy();
      return;
    }
    const { status, message, headers, log } = errorResponse(err);
    if (log) logger[log.level]({ err, reqId: req.requestId }, log.msg);
    sendError(res, status, message, headers);
  };
}

export const notFoundHandler: RequestHandler = (req, res) => {
  sendError(res, 404, `Not found: ${req.method} ${echoInput(req.path)}`);
};

/** Async route/middleware errors reach the error handler instead of crashing or hanging. */
export function asyncHandler(fn: (...args: Parameters<RequestHandler>) => Promise<unknown>): RequestHandler {
  return (req, res, next) => {
    fn(req, res, next).catch(next);
  };
}
