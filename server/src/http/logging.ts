import pino, { type DestinationStream, type Logger } from 'pino';
import type { Stage } from './pipeline.js';

/**
 * Paths censored on every log line, whatever logs them: request headers, should anything log them
 * (API key, operator and metrics tokens travel in Authorization; Chargebee's basic auth too;
 * webhook signatures), and secret-bearing fields should an object holding them ever be logged.
 */
export const REDACTED_PATHS = [
  'req.headers.authorization',
  'req.headers.cookie',
  'req.headers["stripe-signature"]',
  'req.headers["paddle-signature"]',
  'req.headers["x-signature"]',
  'req.headers["webhook-signature"]',
  'res.headers["set-cookie"]',
  'headers.authorization',
  'authorization',
  'api_key',
  '*.api_key',
  'signing_secret',
  '*.signing_secret',
  'password',
];

/**
 * The service's logger: JSON lines, secrets redacted. By default on stdout through an
 * asynchronous stream that coalesces lines while a write is in flight (a synchronous write per
 * request line was a measurable share of the hot paths); pino flushes it when the process
 * exits, and main.ts flushes it on shutdown.
 */
export function createLogger(level: string, destination?: DestinationStream): Logger {
  const options = { level, redact: { paths: REDACTED_PATHS, censor: '[redacted]' } };
  return pino(options, destination ?? pino.destination({ dest: 1, sync: false }));
}

/** What code handling a request logs through (`req.log`): the service's logger, bound to the request id. */
export type RequestLog = Pick<Logger, 'error' | 'warn' | 'info' | 'debug'>;

/**
 * `req.log`: creates the child logger bound to the request id only when something logs. A plain
 * object in a data property, not a getter defined on the request: Object.defineProperty on each
 * request cost microseconds per request (V8 gives every such request object a map of its own).
 */
class LazyRequestLog implements RequestLog {
  private child: Logger | undefined;

  constructor(
    private readonly logger: Logger,
    private readonly req: { requestId: string },
  ) {}

  private get bound(): Logger {
    return (this.child ??= this.logger.child({ reqId: this.req.requestId }));
  }

  error(obj: unknown, msg?: string, ...args: unknown[]): void {
    this.bound.error(obj as object, msg, ...args);
  }
  warn(obj: unknown, msg?: string, ...args: unknown[]): void {
    this.bound.warn(obj as object, msg, ...args);
  }
  info(obj: unknown, msg?: string, ...args: unknown[]): void {
    this.bound.info(obj as object, msg, ...args);
  }
  debug(obj: unknown, msg?: string, ...args: unknown[]): void {
    this.bound.debug(obj as object, msg, ...args);
  }
}

/** The access-log line of one answered request (see accessLogStage). */
export function logRequestCompleted(
  logger: Logger,
  req: { requestId: string; method?: string; url?: string; socket: { remoteAddress?: string } },
  url: string,
  statusCode: number,
  startedNs: bigint,
): void {
  if (!logger.isLevelEnabled('info')) return;
  logger.info(
    {
      req: { id: req.requestId, method: req.method, url, remoteAddress: req.socket.remoteAddress },
      res: { statusCode },
      responseTime: Number(process.hrtime.bigint() - startedNs) / 1e6,
    },
    'request completed',
  );
}

/**
 * The access log: one line per answered request, `{ req: { id, method, url, remoteAddress },
 * res: { statusCode }, responseTime }`. Deliberately not the headers: what is not logged cannot
 * leak, and serialising them was the largest part of logging's cost on the hot paths. `req.log`
 * logs bound to the request id (LazyRequestLog).
 */
export function accessLogStage(logger: Logger): Stage {
  const access = withoutRedaction(logger);
  return {
    name: 'access log',
    run(req) {
      req.log = new LazyRequestLog(logger, req);
    },
    answered(req, status) {
      logRequestCompleted(access, req, req.originalUrl ?? req.url!, status, req.startedNs);
    },
  };
}

/**
 * `logger` without its redaction (createLogger's REDACTED_PATHS), for the access line only, whose
 * fields are fixed and hold no secret (logRequestCompleted): a pino child with an empty redact list,
 * so the same stream, level, bindings and serializers. Redaction walks every path on every line;
 * on the access line, written for every request, that was about 5 % of the service's CPU per
 * request.
 */
function withoutRedaction(logger: Logger): Logger {
  return logger.child({}, { redact: [] });
}
