import type { RequestHandler } from 'express';
import type { MikroORM } from '@mikro-orm/postgresql';
import { sendError } from './error-handler.js';
import type { Stage } from './pipeline.js';

/** What /ready reports on; main.ts flips `draining` on SIGTERM. */
export class Readiness {
  draining = false;
}

/** Draining (SIGTERM): answer what arrives, but tell keep-alive clients to reconnect elsewhere. */
export function drainingStage(readiness: Readiness): Stage {
  return {
    name: 'draining',
    run(_req, _res, headers) {
      if (readiness.draining) headers.setHeader('Connection', 'close');
    },
  };
}

/** GET /health: the process is up and serving HTTP. No dependency is checked (that is /ready). */
export const healthHandler: RequestHandler = (_req, res) => {
  res.setHeader('Cache-Control', 'no-store');
  res.status(200).json({ success: true, data: { status: 'ok' } });
};

/**
 * GET /ready: the database answers `select 1` within `timeoutMs`, and the instance is not shutting
 * down. A load balancer stops sending traffic on 503 and resumes when it turns 200 again, with no
 * restart: the pool reconnects by itself when PostgreSQL is back.
 */
export function readinessHandler(orm: MikroORM, readiness: Readiness, timeoutMs = 2_000): RequestHandler {
  return (_req, res) => {
    res.setHeader('Cache-Control', 'no-store');
    if (readiness.draining) {
      sendError(res, 503, 'Shutting down', { 'Retry-After': '1' });
      return;
    }
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_resolve, reject) => {
      timer = setTimeout(() => reject(new Error('database check timed out')), timeoutMs);
    });
    Promise.race([orm.em.getConnection().execute('select 1'), timeout])
      .then(
        () => res.status(200).json({ success: true, data: { status: 'ready', database: 'ok' } }),
        () => sendError(res, 503, 'Database unavailable', { 'Retry-After': '1' }),
      )
      .finally(() => clearTimeout(timer));
  };
}
