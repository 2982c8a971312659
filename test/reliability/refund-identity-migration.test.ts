import { MikroORM } from '@mikro-orm/postgresql';
import { describe, expect, it } from 'vitest';
import { startEmbeddedPostgres } from '../../server/src/db/embedded.js';
import { closeOrm, ormOptions } from '../../server/src/db/orm.js';

/**
 * Migration20261224000000_refund_identity: refunds recorded under channel keys before it are
 * re-keyed by identity, and two running totals of one charge (the API's and Stripe's) become one,
 * the larger. On the embedded database, whatever DATABASE_URL says (it needs a database of its own
 * migrated half-way).
 */
describe('migration: refunds keyed by identity', () => {
  it('re-keys every channel key and merges running totals', { timeout: 60_000 }, async () => {
    const embedded = await startEmbeddedPostgres();
    const orm = await MikroORM.init(ormOptions(embedded.url, 1));
    try {
      await orm.migrator.up({ to: 'Migration20261210000000_rate_limits' });
      const connection = orm.em.getConnection();
      // Foreign keys off for this session: the rows below need no organization or conversion.
      await connection.execute('set session_replication_role = replica');
      const a = '00000000-0000-4000-8000-00000000000a';
      const b = '00000000-0000-4000-8000-00000000000b';
      const org = '00000000-0000-4000-8000-000000000001';
      const rows: [string, string, string][] = [
        [a, 'api', '40'],
        [a, 'stripe:charge:ch_1', '45'],
        [a, 'api:re_9', '10'],
        [b, 'paddle:adjustment:adj_1', '5'],
        [b, 'chargebee:refund:txn_1', '6'],
        [b, 'polar:order:ord_1', '7'],
        [b, 'ord_ls_1', '8'],
      ];
      for (const [conversion, key, amount] of rows) {
        await connection.execute('insert into conversion_refunds (organization_id, conversion_id, refund_key, amount) values (?, ?, ?, ?)', [org, conversion, key, amount]);
      }
      await orm.migrator.up({ to: 'Migration20261224000000_refund_identity' });
      const after = await connection.execute<{ conversion_id: string; refund_key: string; amount: string }[]>(
        'select conversion_id, refund_key, amount::text as amount from conversion_refunds order by conversion_id, refund_key',
      );
      expect(after.map((r) => [r.conversion_id, r.refund_key, r.amount])).toEqual([
        [a, 'refund:re_9', '10'],
        [a, 'total', '45'],
        [b, 'refund:adj_1', '5'],
        [b, 'refund:txn_1', '6'],
        [b, 'total', '8'],
      ]);
    } finally {
      await closeOrm(orm, true);
      await embedded.stop();
    }
  });
});
