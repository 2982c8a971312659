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

/**
 * Query parameters that carry a secret somewhere in the service: the one-time `token` of the links
 * it e-mails or hands out (dashboard invitations and password resets, partner sign-in and preview
 * links, better-auth's magic-link verification), and any other name that says it is one.
 */
const SECRET_QUERY_PARAMETER = /token|secret|password|signature|api_?key/i;
/** better-auth's own password-reset link carries its token in the path: `/auth/reset-password/<token>`. */
const SECRET_PATH = /^(\/auth\/reset-password\/)[^/?]+/;

/**
 * The URL as the access log writes it: one-time secrets replaced by `[redacted]` (`token=[redacted]`).
 * A link that signs someone in must not outlive its use in a log file that more people read than
 * the database. The common URL (no query, no secret path) is returned as it is, without parsing.
 */
export function redactUrl(url: string): string {
  const out = SECRET_PATH.test(url) ? url.replace(SECRET_PATH, '$1[redacted]') : url;
  const query = out.indexOf('?');
  if (query < 0) return out;
  const path = out.slice(0, query);
  const search = out.slice(query + 1);
  if (!SECRET_QUERY_PARAMETER.test(search)) return out;
  const redacted = search
    .split('&')
    .map((part) => {
      const equals = part.indexOf('=');
      const rawName = equals < 0 ? part : part.slice(0, equals);
      let name = rawName;
      try {
        name = decodeURIComponent(rawName.replace(/\+/g, ' '));
      } catch {
        // a malformed escape: judged by its raw text
      }
      return SECRET_QUERY_PARAMETER.test(name) ? `${rawName}=[redacted]` : part;
    })
    .join('&');
  return `${path}?${redacted}`;
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
      req: { id: req.requestId, method: req.method, url: redactUrl(url), remoteAddress: req.socket.remoteAddress },
      res: { statusCode },
      responseTime: Number(process.hrtime.bigint() - startedNs) / 1e6,
    },
    'request completed',
  );
}

/**
 * The access log: one line per answered request, `{ req: { id, method, url, remoteAddress },
 * res: { statusCode }, responseTime }`, the URL's one-time secrets redacted (redactUrl).
 * Deliberately not the headers (Referer included, which may hold a page's link): what is not logged cannot
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
 * fields are fixed and hold no secret once its URL is redacted (logRequestCompleted): a pino child with an empty redact list,
 * so the same stream, level, bindings and serializers. Redaction walks every path on every line;
 * on the access line, written for every request, that was about 5 % of the service's CPU per
 * request.
 */
function withoutRedaction(logger: Logger): Logger {
  return logger.child({}, { redact: [] });
}
