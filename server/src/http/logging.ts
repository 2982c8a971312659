import type { IncomingMessage, ServerResponse } from 'node:http';
import pino, { type DestinationStream, type Logger } from 'pino';

/**
 * Paths censored on every log line, whatever logs them: the request headers pino-http records
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

/** The service's logger: JSON lines (stdout by default), secrets redacted. */
export function createLogger(level: string, destination?: DestinationStream): Logger {
  const options = { level, redact: { paths: REDACTED_PATHS, censor: '[redacted]' } };
  return destination ? pino(options, destination) : pino(options);
}

/**
 * What one access-log line says about a request and its answer. Deliberately not the headers:
 * serialising them was the largest part of logging's cost on the hot paths, and what is not
 * logged cannot leak (the redaction above still guards anything logged elsewhere).
 */
export const accessLogSerializers = {
  req: (req: IncomingMessage & { id?: unknown; remoteAddress?: string }) => ({
    id: req.id,
    method: req.method,
    url: req.url,
    remoteAddress: req.remoteAddress,
  }),
  res: (res: ServerResponse) => ({ statusCode: res.statusCode }),
};
