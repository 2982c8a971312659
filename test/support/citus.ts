import pg from 'pg';

/**
 * Test databases on a Citus cluster (test/reliability/citus-suites.ts points DATABASE_URL at a
 * coordinator). A database is one node's: each test database is created on the coordinator and
 * on every worker, with the citus extension in each, and the new coordinator database is told its
 * nodes (as an operator does, docs/scaling.md), so that the migrations distribute the schema.
 * Which nodes: the ones the coordinator's admin database (DATABASE_URL's) has, found in its
 * metadata; a server without the citus extension there is plain PostgreSQL and none of this runs.
 */
export interface CitusNode {
  host: string;
  port: number;
}

export interface CitusNodes {
  coordinator: CitusNode;
  workers: CitusNode[];
}

/** A short-lived client on `url`, ended whatever `use` does. */
export async function withClient<T>(url: string, use: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await use(client);
  } finally {
    await client.end();
  }
}

function urlOf(serverUrl: string, node: CitusNode, database: string): string {
  const url = new URL(serverUrl);
  url.hostname = node.host;
  url.port = String(node.port);
  url.pathname = `/${database}`;
  return url.toString();
}

/** The coordinator and workers of the cluster at serverUrl, or undefined on plain PostgreSQL. */
export async function citusNodesOf(serverUrl: string): Promise<CitusNodes | undefined> {
  return withClient(serverUrl, async (client) => {
    const installed = await client.query(`select 1 from pg_extension where extname = 'citus'`);
    if (installed.rowCount === 0) return undefined;
    const { rows } = await client.query<{ host: string; port: number; coordinator: boolean }>(
      `select nodename as host, nodeport as port, groupid = 0 as coordinator from pg_dist_node
       where isactive and noderole = 'primary' order by groupid`,
    );
    const coordinator = rows.find((r) => r.coordinator);
    const workers = rows.filter((r) => !r.coordinator).map(({ host, port }) => ({ host, port }));
    if (!coordinator || workers.length === 0)
      throw new Error(
        `the citus extension is installed at DATABASE_URL but its metadata names ${coordinator ? 'no worker' : 'no coordinator (citus_set_coordinator_host)'}`,
      );
    return { coordinator: { host: coordinator.host, port: coordinator.port }, workers };
  });
}

/** Creates `name` on every node with the extension and registers the nodes in its coordinator database. */
export async function createCitusDatabase(serverUrl: string, nodes: CitusNodes, name: string): Promise<void> {
  for (const node of [...nodes.workers, nodes.coordinator]) {
    await withClient(urlOf(serverUrl, node, 'postgres'), (c) => c.query(`create database "${name}"`));
    await withClient(urlOf(serverUrl, node, name), (c) => c.query('create extension citus'));
  }
  await withClient(urlOf(serverUrl, nodes.coordinator, name), async (c) => {
    await c.query('select citus_set_coordinator_host($1, $2)', [nodes.coordinator.host, nodes.coordinator.port]);
    for (const worker of nodes.workers) await c.query('select citus_add_node($1, $2)', [worker.host, worker.port]);
  });
}

/** Drops `name` on the coordinator and on every worker. */
export async function dropCitusDatabase(serverUrl: string, nodes: CitusNodes, name: string): Promise<void> {
  for (const node of [nodes.coordinator, ...nodes.workers])
    await withClient(urlOf(serverUrl, node, 'postgres'), (c) =>
      c.query(`drop database if exists "${name}" with (force)`),
    );
}
