import type { RequestHandler } from 'express';
import { buildSnippet, type BuiltSnippet } from './build.js';

/**
 * Browsers and CDNs may reuse the snippet for an hour and serve a stale copy for a day while
 * revalidating, so that a new version reaches every page within about an hour without ever
 * making a page wait on the service. Revalidation is cheap: a strong ETag answers 304.
 */
export const SNIPPET_CACHE_CONTROL = 'public, max-age=3600, stale-while-revalidate=86400, stale-if-error=86400';

/**
 * GET /snippet.js. The build starts when the handler is created (server start), so that the first
 * page view does not wait for it; a failed build answers 500 and is retried on the next request.
 */
export function snippetHandler(): RequestHandler {
  let built: Promise<BuiltSnippet> | undefined;
  const load = (): Promise<BuiltSnippet> => {
    built ??= buildSnippet().catch((err: unknown) => {
      built = undefined;
      throw err;
    });
    return built;
  };
  load().catch(() => undefined);

  return (req, res, next) => {
    load().then((snippet) => {
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
    }, next);
  };
}
