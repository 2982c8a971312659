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
  const [{ PGlite }, { PGLiteSocketServer }] = await Promise.all([import('@electric-sql/pglite'), import('@electric-sql/pglite-socket')]);
  const db = await PGlite.create(dataDir);
  const server = new PGLiteSocketServer({ db, host: '127.0.0.1', port: 0 });
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
