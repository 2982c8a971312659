import { mkdirSync } from 'node:fs';

export interface EmbeddedPostgres {
  url: string;
  stop(): Promise<void>;
}

/**
 * An embedded PostgreSQL (PGlite) served over a local TCP socket, so that the same
 * @mikro-orm/postgresql driver talks to it as to a real server. For trying the service and for
 * tests on a laptop without PostgreSQL; never the production setting. PGlite is single-connection:
 * the pool must be sized 1 (see orm.ts).
 * dataDir undefined keeps the database in memory.
 */
export async function startEmbeddedPostgres(dataDir?: string): Promise<EmbeddedPostgres> {
  if (dataDir) mkdirSync(dataDir, { recursive: true });
  // Loaded only when used: a service on a real PostgreSQL does not carry PGlite in its memory.
  const [{ PGlite }, { PGLiteSocketServer }] = await Promise.all([
    import('@electric-sql/pglite'),
    import('@electric-sql/pglite-socket'),
  ]);
  const db = await PGlite.create(dataDir);
  // The pool holds one connection (PGlite is one session), but a connection the pool has just
  // dropped (idle, or a start-up probe) may still be closing on this side when the next one
  // arrives: with the socket server's default of one connection, that one would be refused ("Too
  // many connections", a 503 for nothing). The server queues every connection's statements on the
  // one session and keeps a transaction's statements together, so a few are safe.
  const server = new PGLiteSocketServer({ db, host: '127.0.0.1', port: 0, maxConnections: 4 });
  await server.start();
  const conn = server.getServerConn();
  return {
    url: `postgres://postgres@${conn}/postgres`,
    async stop() {
      await server.stop();
      await db.close();
    },
  };
}
