import type { RequestHandler } from 'express';
import { sendError } from '../http/error-handler.js';
import { loadSnippet, SNIPPET_ARTEFACT, SnippetNotBuiltError, type BuiltSnippet } from './artefact.js';

/**
 * Browsers and CDNs may reuse the snippet for an hour and serve a stale copy for a day while
 * revalidating, so that a new version reaches every page within about an hour without ever
 * making a page wait on the service. Revalidation is cheap: a strong ETag answers 304.
 */
export const SNIPPET_CACHE_CONTROL = 'public, max-age=3600, stale-while-revalidate=86400, stale-if-error=86400';

/**
 * GET /snippet.js: the file `npm run build` compiled (./artefact.ts), read when the handler is
 * created (server start) and held. Not built yet: 503 saying how to build it, read again on the
 * next request.
 */
export function snippetHandler(path: string = SNIPPET_ARTEFACT): RequestHandler {
  let built: Promise<BuiltSnippet> | undefined;
  const load = (): Promise<BuiltSnippet> => {
    built ??= loadSnippet(path).catch((err: unknown) => {
      built = undefined;
      throw err;
    });
    return built;
  };
  load().catch(() => undefined);

  return (req, res, next) => {
    load().then(
      (snippet) => {
        res.setHeader('Content-Type', 'application/javascript; charset=utf-8');
        res.setHeader('Cache-Control', SNIPPET_CACHE_CONTROL);
        res.setHeader('ETag', snippet.etag);
        res.setHeader('Vary', 'Accept-Encoding');
        res.setHeader('X-Content-Type-Options', 'nosniff');
        // Any page may load it, including with crossorigin="anonymous" (error reporting, SRI).
        res.setHeader('Access-Control-Allow-Origin', '*');
        res.setHeader('Cross-Origin-Resource-Policy', 'cross-origin');
        if (req.fresh) {
          res.status(304).end();
          return;
        }
        const encoding = req.acceptsEncodings('br', 'gzip', 'identity');
        const body = encoding === 'br' ? snippet.brotli : encoding === 'gzip' ? snippet.gzip : snippet.code;
        if (encoding === 'br' || encoding === 'gzip') res.setHeader('Content-Encoding', encoding);
        res.setHeader('Content-Length', String(body.length));
        res.status(200).end(req.method === 'HEAD' ? undefined : body);
      },
      (err: unknown) => {
        if (err instanceof SnippetNotBuiltError) {
          res.setHeader('Cache-Control', 'no-store');
          sendError(res, 503, err.message);
          return;
        }
        next(err);
      },
    );
  };
}
