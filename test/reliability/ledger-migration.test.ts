import { MikroORM } from '@mikro-orm/postgresql';
import { describe, expect, it } from 'vitest';
import { startEmbeddedPostgres } from '../../server/src/db/embedded.js';
import { closeOrm, ormOptions } from '../../server/src/db/orm.js';

/**
 * Migration20261225000000_ledger: every existing conversion that earned a commission gets its one
 * `sale` entry, its hold counted from its occurred_at; one that earned nothing gets none; a fully
 * refunded one is `reversed` with the commission it had. On the embedded database, whatever
 * DATABASE_URL says (it needs a database of its own migrated half-way).
 */
describe('migration: the ledger', () => {
  it('gives existing conversions their sale entries', { timeout: 60_000 }, async () => {
    const embedded = await startEmbeddedPostgres();
    const orm = await MikroORM.init(ormOptions(embedded.url, 1));
    try {
      await orm.migrator.up({ to: 'Migration20261224000000_refund_identity' });
      const connection = orm.em.getConnection();
      // Foreign keys off for this session: no organization or affiliate rows are needed.
      await connection.execute('set session_replication_role = replica');
      const org = '00000000-0000-4000-8000-000000000001';
      const program = '00000000-0000-4000-8000-0000000000a1';
      const affiliate = '00000000-0000-4000-8000-0000000000b1';
      await connection.execute(
        `insert into programs (id, organization_id, name, commission_type, commission_value, click_window_days, currency) values (?, ?, 'P', 'percent', 30, 60, 'USD')`,
        [program, org],
      );
      const conversions: [string, string, string, string, string | null, string][] = [
        // id suffix, external id, commission, status, gross commission, occurred_at
        ['c1', 'paid-sale', '30.00', 'approved', null, '2026-01-10T00:00:00Z'],
        ['c2', 'past-window', '0.00', 'approved', null, '2026-01-11T00:00:00Z'],
        ['c3', 'fully-refunded', '0.00', 'reversed', '20.00', '2026-01-12T00:00:00Z'],
        ['c4', 'partly-refunded', '12.00', 'approved', '18.00', '2026-11-20T00:00:00Z'],
      ];
      for (const [suffix, external, commission, status, gross, at] of conversions) {
        await connection.execute(
          `insert into conversions (id, organization_id, external_id, amount, currency, kind, commission_amount, status, gross_commission_amount, customer_id, affiliate_id, program_id, occurred_at)
           values (?, ?, ?, 100, 'USD', 'initial', ?, ?, ?, 'cus_1', ?, ?, ?)`,
          [`00000000-0000-4000-8000-0000000000${suffix}`, org, external, commission, status, gross, affiliate, program, at],
        );
      }
      await orm.migrator.up();
      const entries = await connection.execute<{ external_id: string; type: string; status: string; amount: string; approves_at: Date; customer_id: string }[]>(
        `select v.external_id, c.type, c.status, c.amount::text as amount, c.approves_at, c.customer_id
           from commissions c join conversions v on v.id = c.conversion_id order by v.external_id`,
      );
      expect(entries.map((e) => [e.external_id, e.type, e.status, e.amount, new Date(e.approves_at).toISOString(), e.customer_id])).toEqual([
        ['fully-refunded', 'sale', 'reversed', '20.00', '2026-02-11T00:00:00.000Z', 'cus_1'],
        ['paid-sale', 'sale', 'pending', '30.00', '2026-02-09T00:00:00.000Z', 'cus_1'],
        ['partly-refunded', 'sale', 'pending', '12.00', '2026-12-20T00:00:00.000Z', 'cus_1'],
      ]);
      const [program_] = await connection.execute<{ hold_days: number; auto_approve: boolean; minimum_payout: string }[]>('select hold_days, auto_approve, minimum_payout::text as minimum_payout from programs');
      expect(program_).toEqual({ hold_days: 30, auto_approve: true, minimum_payout: '0.00' });
    } finally {
      await closeOrm(orm, true);
      await embedded.stop();
    }
  });
});
