import { afterAll, beforeAll, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import {
  call,
  createMerchantOn,
  describeWithPostgres,
  startService,
  stopService,
  withDatabase,
  type JsonResponse,
  type ServiceProcess,
} from './support/service.js';

const COPIES_PER_INSTANCE = 8;

/**
 * Two service processes on one database; the same idempotent request sent to both at once, many
 * times: one record, one 201, every other answer a 200 with `deduped: true` and the same record.
 */
describeWithPostgres('two instances on one database', () => {
  let db: TestDatabase;
  let a: ServiceProcess | undefined;
  let b: ServiceProcess | undefined;
  let merchant: Awaited<ReturnType<typeof createMerchantOn>>;

  beforeAll(async () => {
    db = await createTestDatabase();
    [a, b] = await Promise.all([startService(db.url), startService(db.url)]);
    merchant = await createMerchantOn(a.url);
  }, 120_000);
  afterAll(async () => {
    await Promise.all([stopService(a), stopService(b)]);
    await db?.stop();
  });

  /** The same request, COPIES_PER_INSTANCE times to each instance, all in flight together. */
  async function race(path: string, body: unknown): Promise<JsonResponse[]> {
    const sends = [];
    for (let i = 0; i < COPIES_PER_INSTANCE; i++) {
      for (const instance of [a!, b!]) sends.push(call(instance.url, 'POST', path, { key: merchant.key, body }));
    }
    return Promise.all(sends);
  }

  function expectOneCreated(responses: JsonResponse[], resource: string): string {
    const statuses = responses.map((r) => r.status).sort();
    expect(
      statuses.filter((s) => s === 201),
      JSON.stringify(responses.map((r) => r.body)),
    ).toHaveLength(1);
    expect(statuses.filter((s) => s === 200)).toHaveLength(responses.length - 1);
    const ids = new Set(responses.map((r) => r.body.data[resource].id));
    expect(ids.size).toBe(1);
    expect(responses.filter((r) => r.body.deduped === true)).toHaveLength(responses.length - 1);
    return [...ids][0];
  }

  async function count(table: string, column: string, value: string): Promise<number> {
    return withDatabase(db.url, async (client) => {
      const { rows } = await client.query(
        `select count(*)::int as n from ${table} where organization_id = $1 and ${column} = $2`,
        [merchant.organizationId, value],
      );
      return rows[0].n as number;
    });
  }

  it(
    'affiliates, customers and conversions: one record each, whatever the interleaving',
    { timeout: 90_000 },
    async () => {
      const rounds = 5;
      let requests = 0;
      for (let round = 0; round < rounds; round++) {
        const tag = `${Date.now()}-${round}`;

        const email = `partner-${tag}@example.com`;
        const affiliates = await race('/api/affiliates', { email, program_id: merchant.programId });
        expectOneCreated(affiliates, 'affiliate');
        expect(await count('affiliates', 'email', email)).toBe(1);

        const customerId = `cus-${tag}`;
        const customers = await race('/api/customers', { customer_id: customerId, ref: merchant.slug });
        expectOneCreated(customers, 'customer');
        expect(await count('customers', 'customer_id', customerId)).toBe(1);

        const externalId = `inv-${tag}`;
        const conversions = await race('/api/conversions', {
          external_id: externalId,
          amount: 99.5,
          customer_id: customerId,
        });
        expectOneCreated(conversions, 'conversion');
        expect(await count('conversions', 'external_id', externalId)).toBe(1);

        // A first sale that also creates its customer, in one request: both exist once.
        const newCustomer = `cus-new-${tag}`;
        const both = await race('/api/conversions', {
          external_id: `inv-new-${tag}`,
          amount: 10,
          ref: merchant.slug,
          customer_id: newCustomer,
        });
        expectOneCreated(both, 'conversion');
        expect(await count('conversions', 'external_id', `inv-new-${tag}`)).toBe(1);
        expect(await count('customers', 'customer_id', newCustomer)).toBe(1);

        requests += affiliates.length + customers.length + conversions.length + both.length;
      }
      // Commission was computed once per conversion: the sums match one conversion each.
      const totals = await withDatabase(db.url, (client) =>
        client.query(
          'select count(*)::int as n, sum(amount)::numeric as amount from conversions where organization_id = $1',
          [merchant.organizationId],
        ),
      );
      expect(totals.rows[0].n).toBe(rounds * 2);
      expect(Number(totals.rows[0].amount)).toBeCloseTo(rounds * (99.5 + 10), 2);
      console.info(
        `[two-instances] ${requests} requests over ${rounds} rounds to 2 processes: ${rounds * 5} records, each exactly once`,
      );
    },
  );
});
