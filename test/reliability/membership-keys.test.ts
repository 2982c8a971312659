import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { twoMerchantsAndASecondProgram } from '../support/memberships.js';

/**
 * Migration 20261231400000_membership_foreign_keys: a row of a membership (a click, customer,
 * conversion, commission entry, payout, coupon) names its affiliate, program and organization, and
 * one composite foreign key holds all three: the affiliate exists in that organization and that
 * program is the affiliate's (for conversions and entries, a check per statement since migration
 * 20261231600000). Checked here on PostgreSQL itself, below the service.
 */
describe('membership foreign keys', () => {
  it('refuse a row whose program is not its affiliate’s, or whose affiliate is another organization’s, and accept the right one', async () => {
    const { connection, a, b, secondProgramId, insertClick } = await twoMerchantsAndASecondProgram();
    const foreignKeyError = { code: '23503', constraint: 'clicks_membership_fkey' };

    // Another program of the same organization: the affiliate is not a member of it.
    await expect(insertClick(a.id, a.affiliate.id, secondProgramId)).rejects.toMatchObject(foreignKeyError);
    // Another organization's affiliate and program, under this organization.
    await expect(insertClick(a.id, b.affiliate.id, b.program.id)).rejects.toMatchObject(foreignKeyError);
    // An affiliate that does not exist.
    await expect(insertClick(a.id, randomUUID(), a.program.id)).rejects.toMatchObject(foreignKeyError);
    await insertClick(a.id, a.affiliate.id, a.program.id);

    // The same key on every membership table, and no longer the three separate ones.
    const keys = await connection.execute<{ table: string; name: string }[]>(
      `select conrelid::regclass::text as "table", conname as name from pg_constraint
       where contype = 'f' and conrelid::regclass::text in ('clicks', 'suppressed_clicks', 'customers', 'conversions', 'commissions', 'payouts', 'coupons')
         and (confrelid = 'affiliates'::regclass or confrelid = 'programs'::regclass or confrelid = 'organizations'::regclass)
       order by 1, 2`,
    );
    expect(keys).toEqual(
      ['clicks', 'commissions', 'conversions', 'coupons', 'customers', 'payouts', 'suppressed_clicks'].map((table) => ({
        table,
        name: `${table}_membership_fkey`,
      })),
    );
  });
});
