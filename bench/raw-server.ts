/**
 * The raw floor of the benchmark: the same work as the service's hot paths with no framework,
 * no ORM and no validation library, written the way a careful engineer would by hand:
 * node:http + pg, authenticate the key by its hash, resolve the slug or cookie, insert (with
 * ON CONFLICT for idempotent writes). It exists only to be measured against.
 */
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import pg from 'pg';

const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: Number(process.env.DB_POOL_MAX ?? 10) });
const port = Number(process.env.PORT ?? 3999);

function send(res: ServerResponse, status: number, body: unknown): void {
  const json = JSON.stringify(body);
  res.writeHead(status, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(json),
  });
  res.end(json);
}

async function readJson(req: IncomingMessage): Promise<Record<string, any>> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}');
}

async function authenticate(req: IncomingMessage): Promise<{ id: string; name: string } | undefined> {
  const header = (req.headers.authorization ?? '').replace(/^Bearer\s+/i, '');
  if (!header.startsWith('svc-')) return undefined;
  const hash = createHash('sha256').update(header).digest('hex');
  const { rows } = await pool.query(
    'select o.id, o.name from api_keys k join organizations o on o.id = k.organization_id where k.key_hash = $1 and k.revoked_at is null',
    [hash],
  );
  return rows[0];
}

async function resolve(
  org: string,
  body: Record<string, any>,
): Promise<{ affiliate_id: string; program_id: string; click_id: string | null } | undefined> {
  if (typeof body.cookie_id === 'string' && body.cookie_id.startsWith('ck_')) {
    const { rows } = await pool.query(
      'select id as click_id, affiliate_id, program_id from clicks where organization_id = $1 and cookie_id = $2',
      [org, body.cookie_id],
    );
    return rows[0];
  }
  const slug = body.ref ?? body.cookie_id;
  if (typeof slug !== 'string') return undefined;
  const { rows } = await pool.query(
    'select id as affiliate_id, program_id, null as click_id from affiliates where organization_id = $1 and slug = $2',
    [org, slug],
  );
  return rows[0];
}

const cookieId = () => 'ck_' + randomBytes(16).toString('base64url').replace(/[-_]/g, 'x').slice(0, 22);

const routes: Record<
  string,
  (org: { id: string; name: string }, req: IncomingMessage, res: ServerResponse) => Promise<void>
> = {
  'GET /api/me': async (org, _req, res) => send(res, 200, { success: true, data: { organization: org } }),

  'POST /api/clicks': async (org, req, res) => {
    const body = await readJson(req);
    if (typeof body.ref !== 'string') return send(res, 400, { success: false, message: 'ref: Required' });
    const { rows } = await pool.query(
      'select id, program_id from affiliates where organization_id = $1 and slug = $2',
      [org.id, body.ref],
    );
    if (!rows[0]) return send(res, 404, { success: false, message: 'No attribution found' });
    const now = new Date();
    const click = {
      id: randomUUID(),
      cookie_id: cookieId(),
      affiliate_id: rows[0].id,
      program_id: rows[0].program_id,
      occurred_at: now,
      created_at: now,
    };
    await pool.query(
      'insert into clicks (id, organization_id, affiliate_id, program_id, cookie_id, occurred_at, created_at) values ($1, $2, $3, $4, $5, $6, $7)',
      [click.id, org.id, click.affiliate_id, click.program_id, click.cookie_id, now, now],
    );
    send(res, 201, { success: true, data: { click } });
  },

  'POST /api/customers': async (org, req, res) => {
    const body = await readJson(req);
    if (typeof body.customer_id !== 'string')
      return send(res, 400, { success: false, message: 'customer_id: Required' });
    const attribution = await resolve(org.id, body);
    if (!attribution) return send(res, 404, { success: false, message: 'No attribution found' });
    const now = new Date();
    const { rows } = await pool.query(
      `insert into customers (id, organization_id, customer_id, status, affiliate_id, program_id, click_id, created_at, updated_at)
       values ($1, $2, $3, $4, $5, $6, $7, $8, $8) on conflict (organization_id, customer_id) do nothing returning *`,
      [
        randomUUID(),
        org.id,
        body.customer_id,
        body.status ?? 'trial',
        attribution.affiliate_id,
        attribution.program_id,
        attribution.click_id,
        now,
      ],
    );
    if (rows[0]) return send(res, 201, { success: true, data: { customer: rows[0] }, deduped: false });
    const existing = await pool.query('select * from customers where organization_id = $1 and customer_id = $2', [
      org.id,
      body.customer_id,
    ]);
    send(res, 200, { success: true, data: { customer: existing.rows[0] }, deduped: true });
  },

  'POST /api/conversions': async (org, req, res) => {
    const body = await readJson(req);
    if (typeof body.external_id !== 'string' || typeof body.amount !== 'number') {
      return send(res, 400, { success: false, message: 'external_id and amount are required' });
    }
    let attribution: { affiliate_id: string; program_id: string; click_id: string | null } | undefined;
    let kind = 'initial';
    if (typeof body.customer_id === 'string' && !body.cookie_id && !body.ref) {
      const { rows } = await pool.query(
        'select affiliate_id, program_id, click_id from customers where organization_id = $1 and customer_id = $2',
        [org.id, body.customer_id],
      );
      attribution = rows[0];
      kind = 'recurring';
    } else {
      attribution = await resolve(org.id, body);
    }
    if (!attribution) return send(res, 404, { success: false, message: 'No attribution found' });
    const now = new Date();
    const { rows } = await pool.query(
      `insert into conversions (id, organization_id, external_id, amount, currency, kind, commission_amount, customer_id, affiliate_id, program_id, click_id, occurred_at, created_at)
       values ($1, $2, $3, $4, 'USD', $5, round($4::numeric * 0.3, 2), $6, $7, $8, $9, $10, $10)
       on conflict (organization_id, external_id) do nothing returning *`,
      [
        randomUUID(),
        org.id,
        body.external_id,
        body.amount,
        kind,
        body.customer_id ?? null,
        attribution.affiliate_id,
        attribution.program_id,
        attribution.click_id,
        now,
      ],
    );
    if (rows[0]) return send(res, 201, { success: true, data: { conversion: rows[0] }, deduped: false });
    const existing = await pool.query('select * from conversions where organization_id = $1 and external_id = $2', [
      org.id,
      body.external_id,
    ]);
    send(res, 200, { success: true, data: { conversion: existing.rows[0] }, deduped: true });
  },
};

createServer((req, res) => {
  const route = routes[`${req.method} ${(req.url ?? '').split('?')[0]}`];
  if (!route) return send(res, 404, { success: false, message: 'Not found' });
  authenticate(req)
    .then((org) =>
      org ? route(org, req, res) : send(res, 401, { success: false, message: 'Missing or invalid API key' }),
    )
    .catch((err) => {
      if ((err as NodeJS.ErrnoException).code === 'ECONNRESET') return; // the load generator closed the connection mid-request
      console.error(err);
      send(res, 500, { success: false, message: 'Internal server error' });
    });
}).listen(port, '127.0.0.1', () => console.log(`raw floor on ${port}`));
