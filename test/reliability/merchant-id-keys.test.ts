import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { createMerchant, expectError } from '../support/api.js';
import { testServer } from '../support/server.js';

/**
 * Migration 20261231500000_merchant_id_keys: a conversion's external_id and a customer's
 * customer_id each have one unique key, (merchant id, organization_id), serving "once per
 * organization", the hot writes' ON CONFLICT, and the ownership rule's lookup in every
 * organization (403), where there were two indexes.
 */
describe('merchant id keys', () => {
  it('one merchant id: once per organization, free in another, 403 where only another organization has it', async () => {
    const a = await createMerchant();
    const b = await createMerchant();
    const externalId = `inv_${randomUUID()}`;
    const customerId = `cus_${randomUUID()}`;

    const first = await a.api.post('/api/conversions', { external_id: externalId, amount: 10, ref: a.slug });
    expect(first.status).toBe(201);
    const again = await a.api.post('/api/conversions', { external_id: externalId, amount: 10, ref: a.slug });
    expect(again.body).toMatchObject({ deduped: true, data: { conversion: { id: first.body.data.conversion.id } } });
    expectError(await b.api.get(`/api/conversions/${externalId}`), 403);
    const theirs = await b.api.post('/api/conversions', { external_id: externalId, amount: 20, ref: b.slug });
    expect(theirs.status).toBe(201);
    expect((await b.api.get(`/api/conversions/${externalId}`)).body.data.conversion).toMatchObject({
      id: theirs.body.data.conversion.id,
      amount: 20,
    });
    expect((await a.api.get(`/api/conversions/${externalId}`)).body.data.conversion).toMatchObject({
      id: first.body.data.conversion.id,
      amount: 10,
    });

    expect((await a.api.post('/api/customers', { customer_id: customerId, ref: a.slug })).status).toBe(201);
    expect((await a.api.post('/api/customers', { customer_id: customerId, ref: a.slug })).body.deduped).toBe(true);
    expectError(await b.api.get(`/api/customers/${customerId}`), 403);
    expect((await b.api.post('/api/customers', { customer_id: customerId, ref: b.slug })).status).toBe(201);
    expect((await b.api.get(`/api/customers/${customerId}`)).status).toBe(200);
  });

  it('each merchant id column is in exactly one index: unique, merchant id first, then the organization', async () => {
    const { db } = await testServer();
    const indexes = await db.orm.em
      .getConnection()
      .execute<{ table: string; name: string; unique: boolean; columns: string[] }[]>(
        `select t.relname as "table", i.relname as name, x.indisunique as unique,
         array(select a.attname from unnest(x.indkey) with ordinality k(attnum, n) join pg_attribute a on a.attrelid = t.oid and a.attnum = k.attnum order by k.n)::text[] as columns
       from pg_index x join pg_class i on i.oid = x.indexrelid join pg_class t on t.oid = x.indrelid
       join pg_namespace s on s.oid = t.relnamespace and s.nspname = current_schema()
       where (t.relname = 'conversions' and 'external_id' = any (array(select attname from pg_attribute where attrelid = t.oid and attnum = any (x.indkey))))
          or (t.relname = 'customers' and 'customer_id' = any (array(select attname from pg_attribute where attrelid = t.oid and attnum = any (x.indkey))))
       order by 1`,
      );
    expect(indexes).toEqual([
      {
        table: 'conversions',
        name: 'conversions_external_id_key',
        unique: true,
        columns: ['external_id', 'organization_id'],
      },
      {
        table: 'customers',
        name: 'customers_customer_id_key',
        unique: true,
        columns: ['customer_id', 'organization_id'],
      },
    ]);
  });
});
