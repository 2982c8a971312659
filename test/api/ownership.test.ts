import { beforeAll, describe, expect, it } from 'vitest';
import { ErrorMessages } from '@affiliate-attribution/contract';
import { createMerchant, createOrganization, expectError, type Api } from '../support/api.js';

const UNKNOWN_UUID = '00000000-0000-4000-8000-000000000000';

/**
 * The ownership rule (db/owned-row.ts), one for every row a path names: another organization's
 * row is 403 with the same message everywhere, no row is 404 with the resource's own message, and
 * the other organization's row is left as it was.
 */
describe('ownership of the rows a path names', () => {
  let owner: Awaited<ReturnType<typeof createMerchant>>;
  let intruder: Api;
  const ids: Record<string, { uuid: string; merchantId?: string }> = {};

  beforeAll(async () => {
    owner = await createMerchant();
    intruder = (await createOrganization()).api;
    const customer = (await owner.api.post('/api/customers', { customer_id: `own-cus-${Date.now()}`, ref: owner.slug }))
      .body.data.customer;
    const conversion = (
      await owner.api.post('/api/conversions', { external_id: `own-ord-${Date.now()}`, amount: 10, ref: owner.slug })
    ).body.data.conversion;
    ids.programs = { uuid: owner.program.id };
    ids.affiliates = { uuid: owner.affiliate.id };
    ids.customers = { uuid: customer.id, merchantId: customer.customer_id };
    ids.conversions = { uuid: conversion.id, merchantId: conversion.external_id };
  });

  const resources = [
    ['programs', 'Program not found'],
    ['affiliates', 'Affiliate not found'],
    ['customers', 'Customer not found'],
    ['conversions', 'Conversion not found'],
  ] as const;

  it.each(resources)('%s: 403 for another organization’s row, by every id it answers to', async (resource) => {
    const { uuid, merchantId } = ids[resource];
    for (const id of [uuid, ...(merchantId ? [merchantId] : [])]) {
      expectError(await intruder.get(`/api/${resource}/${encodeURIComponent(id)}`), 403, ErrorMessages.forbidden);
    }
  });

  it.each(resources)('%s: 404 with its own message for no row, a UUID or any other id', async (resource, notFound) => {
    expectError(await intruder.get(`/api/${resource}/${UNKNOWN_UUID}`), 404, notFound);
    expectError(await intruder.get(`/api/${resource}/not-a-known-id`), 404, notFound);
  });

  it('the owner reads its rows; a refused change leaves them as they were', async () => {
    expectError(
      await intruder.patch(`/api/programs/${ids.programs.uuid}`, { commission_value: 99 }),
      403,
      ErrorMessages.forbidden,
    );
    expectError(
      await intruder.patch(`/api/customers/${ids.customers.uuid}`, { status: 'canceled' }),
      403,
      ErrorMessages.forbidden,
    );
    expectError(
      await intruder.post(`/api/conversions/${ids.conversions.uuid}/refund`, {}),
      403,
      ErrorMessages.forbidden,
    );
    expect((await owner.api.get(`/api/programs/${ids.programs.uuid}`)).body.data.program.commission_value).toBe(30);
    expect((await owner.api.get(`/api/customers/${ids.customers.uuid}`)).body.data.customer.status).toBe('trial');
    expect((await owner.api.get(`/api/conversions/${ids.conversions.uuid}`)).body.data.conversion.refunded_amount).toBe(
      0,
    );
    expect((await owner.api.get(`/api/affiliates/${ids.affiliates.uuid}`)).body.data.affiliate).toEqual(
      owner.affiliate,
    );
  });

  it('a merchant id that is another row’s UUID: the row with that UUID answers', async () => {
    const namedLikeIt = (await owner.api.post('/api/customers', { customer_id: ids.customers.uuid, ref: owner.slug }))
      .body.data.customer;
    expect(namedLikeIt.customer_id).toBe(ids.customers.uuid);
    expect((await owner.api.get(`/api/customers/${ids.customers.uuid}`)).body.data.customer.id).toBe(
      ids.customers.uuid,
    );
    expect((await owner.api.get(`/api/customers/${namedLikeIt.id}`)).body.data.customer.id).toBe(namedLikeIt.id);
  });
});
