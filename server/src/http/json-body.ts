import type { IncomingMessage } from 'node:http';
import type { Request } from 'express';
import { HttpError } from './errors.js';
import type { PipelineRequest, Stage } from './pipeline.js';
import { assertUtf8Body, jsonBodyParser } from './security.js';

/** Largest JSON body accepted on /api and /admin (body-parser's `1mb`: 1 MiB). */
export const JSON_BODY_LIMIT_BYTES = 1024 * 1024;

const UTF8_JSON = /^application\/json\s*(;\s*charset\s*=\s*"?utf-8"?\s*)?$/i;

/**
 * A body in the plain form integrations send: a Content-Length within `limit`, no
 * Transfer-Encoding, no Content-Encoding and, when not empty, a UTF-8 JSON Content-Type. Read here
 * directly (both lanes); the other forms (chunked or compressed bodies, other types and charsets)
 * go through body-parser, in Express only.
 */
export function isPlainJsonBody(req: IncomingMessage, limit: number): boolean {
  const { headers } = req;
  if (headers['transfer-encoding'] !== undefined) return false;
  const lengthHeader = headers['content-length'];
  const length = lengthHeader === undefined ? 0 : /^\d{1,10}$/.test(lengthHeader) ? Number(lengthHeader) : Number.NaN;
  if (!(length <= limit)) return false;
  if (headers['content-encoding'] !== undefined && headers['content-encoding'].toLowerCase() !== 'identity')
    return false;
  return length === 0 || UTF8_JSON.test(headers['content-type'] ?? '');
}

/**
 * The JSON body, on /api and /admin, after the credentials (nothing of a body is read before them):
 * no body is `{}`; the plain form is read and parsed here (UTF-8, then JSON as body-parser's strict
 * parser reads it); any other form goes to Express's body-parser, in the same order as ever: a
 * body that is not JSON on POST, PUT or PATCH is 415, a declared length over the limit 413 before
 * a byte is read, then body-parser reads, checks UTF-8 and parses. The hot lane serves only the
 * plain form (hot-routes.ts), so the other forms never reach it.
 */
export function jsonBodyStage(
  defaultLimit: number,
  paths: readonly string[] = ['/api', '/admin'],
  larger: readonly { method: string; path: string; bytes: number }[] = [],
): Stage {
  const parsers = new Map<number, ReturnType<typeof jsonBodyParser>>([
    [defaultLimit, jsonBodyParser({ limit: defaultLimit })],
  ]);
  for (const { bytes } of larger) if (!parsers.has(bytes)) parsers.set(bytes, jsonBodyParser({ limit: bytes }));
  const limitOf = (req: PipelineRequest): number => {
    if (larger.length === 0) return defaultLimit;
    const path = (req.originalUrl ?? req.url ?? '').split('?')[0];
    return larger.find((route) => route.method === req.method && route.path === path)?.bytes ?? defaultLimit;
  };
  return {
    name: 'JSON body',
    paths,
    needed: (route) => route.method !== 'GET',
    run(req, res) {
      const { headers } = req;
      if (headers['content-length'] === undefined && headers['transfer-encoding'] === undefined) {
        req.body ??= {};
        return undefined;
      }
      const limit = limitOf(req);
      const parseOtherForms = parsers.get(limit)!;
      // A route's own larger limit says so when refused (body-parser's message names the default).
      if (limit !== defaultLimit && Number(headers['content-length'] ?? 0) > limit)
        throw new HttpError(
          413,
          `Request body exceeds the ${(limit / 1024 / 1024).toFixed(1)} MiB limit of this route`,
        );
      if (isPlainJsonBody(req, limit)) return readJsonBody(req);
      const hasBody = Number(headers['content-length'] ?? 0) > 0 || headers['transfer-encoding'] !== undefined;
      if (
        hasBody &&
        ['POST', 'PUT', 'PATCH'].includes(req.method!) &&
        !(req as Request).is(['application/json', 'application/*+json'])
      ) {
        throw new HttpError(415, 'Content-Type must be application/json');
      }
      return new Promise<void>((resolve, reject) =>
        parseOtherForms(req as Request, res as never, (err?: unknown) =>
          // eslint-disable-next-line @typescript-eslint/prefer-promise-reject-errors -- passes on the body parser's own error (an HttpError with its status)
          err ? reject(err) : resolve(),
        ),
      );
    },
  };
}

/** Reads a plain-form body and sets `req.body` to its JSON (parseJsonBody). */
function readJsonBody(req: PipelineRequest): Promise<void> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let ended = false;
    req.on('data', (chunk: Buffer) => {
      chunks.push(chunk);
      size += chunk.length;
    });
    req.once('end', () => {
      ended = true;
      try {
        req.body = parseJsonBody(chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, size));
        resolve();
      } catch (err) {
        // eslint-disable-next-line @typescript-eslint/prefer-promise-reject-errors -- passes on parseJsonBody's own error (an HttpError with its status)
        reject(err);
      }
    });
    req.once('error', reject);
    req.once('close', () => {
      if (!ended) reject(Object.assign(new Error('request aborted'), { type: 'request.aborted' }));
    });
  });
}

/**
 * JSON as body-parser's strict parser reads it (with the `verify` of security.ts's jsonBodyParser):
 * bytes that are not UTF-8 refused as 400, a leading BOM dropped, an empty body is `{}`, anything
 * but an object or array (after whitespace) refused, like malformed JSON, as 400.
 */
function parseJsonBody(raw: Buffer): unknown {
  assertUtf8Body(raw);
  let text = raw.toString('utf8');
  if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
  if (text.length === 0) return {};
  const first = /^[ \t\n\r]*(.)/.exec(text)?.[1];
  try {
    if (first !== '{' && first !== '[') throw new SyntaxError('not a JSON object or array');
    return JSON.parse(text);
  } catch (err) {
    throw Object.assign(err as Error, { type: 'entity.parse.failed' });
  }
}
