import { MikroORM } from '@mikro-orm/postgresql';
import { describe, expect, it } from 'vitest';
import { startEmbeddedPostgres } from '../../server/src/db/embedded.js';
import { closeOrm, ormOptions } from '../../server/src/db/orm.js';

/**
 * Migration20261225000000_ledger on a database that has data: existing programs get the ledger's
 * defaults, existing affiliates are active, and the constraints hold the ledger's invariants (one
 * sale entry per conversion, signs per type, a payout only on an approved or paid entry). On the
 * embedded database, whatever DATABASE_URL says (it needs a database of its own migrated half-way).
 */
describe('migration: the ledger', () => {
  it('gives existing programs and affiliates their defaults; the constraints hold', { timeout: 60_000 }, async () => {
    const embedded = await startEmbeddedPostgres();
    const orm = await MikroORM.init(ormOptions(embedded.url, 1));
    try {
      await orm.migrator.up({ to: 'Migration20261224000000_refund_identity' });
      const connection = orm.em.getConnection();
      // Foreign keys off for this session: no organization rows are needed.
      await connection.execute('set session_replication_role = replica');
      const org = '00000000-0000-4000-8000-000000000001';
      const program = '00000000-0000-4000-8000-0000000000a1';
      const affiliate = '00000000-0000-4000-8000-0000000000b1';
      const conversion = '00000000-0000-4000-8000-0000000000c1';
      await connection.execute(
        `insert into programs (id, organization_id, name, commission_type, commission_value, click_window_days, currency) values (?, ?, 'P', 'percent', 30, 60, 'USD')`,
        [program, org],
      );
      await connection.execute(`insert into affiliates (id, organization_id, program_id, email, slug) values (?, ?, ?, 'a@example.com', 'a')`, [affiliate, org, program]);
      await orm.migrator.up();
      const [p] = await connection.execute<{ hold_days: number; auto_approve: boolean; minimum_payout: string }[]>('select hold_days, auto_approve, minimum_payout::text as minimum_payout from programs');
      expect(p).toEqual({ hold_days: 30, auto_approve: true, minimum_payout: '0.00' });
      const [a] = await connection.execute<{ status: string; payout_email: string | null }[]>('select status, payout_email from affiliates');
      expect(a).toEqual({ status: 'active', payout_email: null });

      const entry = (type: string, amount: string, extra = '') =>
        connection.execute(
          `insert into commissions (id, organization_id, type, status, amount, currency, affiliate_id, program_id, conversion_id, description${extra ? ', payout_id' : ''})
           values (gen_random_uuid(), ?, ?, 'pending', ?, 'USD', ?, ?, ${type === 'adjustment' ? 'null' : '?'}, 'd'${extra ? `, '${extra}'` : ''})`,
          type === 'adjustment' ? [org, type, amount, affiliate, program] : [org, type, amount, affiliate, program, conversion],
        );
      await entry('sale', '10');
      await expect(entry('sale', '10'), 'a second sale entry for one conversion').rejects.toThrow(/commissions_one_sale_per_conversion/);
      await expect(entry('clawback', '5'), 'a positive clawback').rejects.toThrow(/commissions_amount_sign/);
      await expect(entry('adjustment', '0'), 'a zero adjustment').rejects.toThrow(/commissions_amount_sign/);
      await expect(entry('clawback', '-5', '00000000-0000-4000-8000-0000000000d1'), 'an entry not paid that records a payout').rejects.toThrow(/commissions_payout_only_when_paid/);
    } finally {
      await closeOrm(orm, true);
      await embedded.stop();
    }
  });

  it('gives every existing conversion that earned something its sale entry, held from occurred_at; reversed ones reversed; none twice', { timeout: 60_000 }, async () => {
    const embedded = await startEmbeddedPostgres();
    const orm = await MikroORM.init(ormOptions(embedded.url, 1));
    try {
      await orm.migrator.up({ to: 'Migration20261225000000_ledger' });
      const connection = orm.em.getConnection();
      await connection.execute('set session_replication_role = replica');
      const org = '00000000-0000-4000-8000-000000000001';
      const held = '00000000-0000-4000-8000-0000000000a1';
      const manual = '00000000-0000-4000-8000-0000000000a2';
      const affiliate = '00000000-0000-4000-8000-0000000000b1';
      for (const [id, auto] of [[held, true], [manual, false]] as const) {
        await connection.execute(
          `insert into programs (id, organization_id, name, commission_type, commission_value, click_window_days, currency, hold_days, auto_approve) values (?, ?, 'P', 'percent', 30, 60, 'USD', 10, ?)`,
          [id, org, auto],
        );
      }
      const conversion = (n: number, program: string, commission: string, extra: { status?: string; gross?: string } = {}) =>
        connection.execute(
          `insert into conversions (id, organization_id, external_id, amount, currency, kind, commission_amount, customer_id, affiliate_id, program_id, occurred_at, status, gross_commission_amount)
           values (?, ?, ?, 50, 'USD', 'initial', ?, 'cus_1', ?, ?, '2026-03-01T12:00:00Z', ?, ?)`,
          [`00000000-0000-4000-8000-0000000000c${n}`, org, `ch_${n}`, commission, affiliate, program, extra.status ?? 'approved', extra.gross ?? null],
        );
      await conversion(1, held, '15');
      await conversion(2, held, '9', { gross: '15' }); // partly refunded
      await conversion(3, held, '0', { status: 'reversed', gross: '15' }); // refunded in full
      await conversion(4, held, '0'); // earned nothing
      await conversion(5, manual, '15');
      await conversion(6, held, '15'); // already has its entry
      await connection.execute(
        `insert into commissions (id, organization_id, type, status, amount, currency, affiliate_id, program_id, conversion_id) values (gen_random_uuid(), ?, 'sale', 'approved', 15, 'USD', ?, ?, '00000000-0000-4000-8000-0000000000c6')`,
        [org, affiliate, held],
      );
      await orm.migrator.up({ to: 'Migration20261226000000_ledger_sale_entries' });
      const rows = await connection.execute<{ conversion_id: string; status: string; amount: string; approves_at: Date | null; customer_id: string | null }[]>(
        `select conversion_id, status, amount::text as amount, approves_at, customer_id from commissions order by conversion_id`,
      );
      const at = new Date('2026-03-11T12:00:00Z');
      expect(rows.map((r) => ({ ...r, conversion_id: r.conversion_id.slice(-2) }))).toEqual([
        { conversion_id: 'c1', status: 'pending', amount: '15', approves_at: at, customer_id: 'cus_1' },
        { conversion_id: 'c2', status: 'pending', amount: '9', approves_at: at, customer_id: 'cus_1' },
        { conversion_id: 'c3', status: 'reversed', amount: '15', approves_at: at, customer_id: 'cus_1' },
        { conversion_id: 'c5', status: 'pending', amount: '15', approves_at: null, customer_id: 'cus_1' },
        { conversion_id: 'c6', status: 'approved', amount: '15.00', approves_at: null, customer_id: null },
      ]);
    } finally {
      await closeOrm(orm, true);
      await embedded.stop();
    }
  });
});
