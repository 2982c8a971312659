import type { MikroORM } from '@mikro-orm/postgresql';
import type { CachedClick } from '../../attribution/cache.js';
import { InsertBatcher, UnnestInsert, writeBatching } from '../../db/batched-insert.js';
import { kyselyOf, type NewRow } from '../../db/database.js';
import { ClickEntity } from './click.entity.js';
import { contributionsSql, deltasInsertSql } from '../reports/report-contributions.js';
import { SuppressedClickEntity } from './suppressed-click.entity.js';

// What the clicks count in the reports is written by the same statement (report-contributions.ts).
const INSERT_CLICKS = new UnnestInsert(ClickEntity, {
  alsoWrite: (inserted) => [deltasInsertSql([contributionsSql('clicks', inserted, 1)])],
});
const INSERT_SUPPRESSED = new UnnestInsert(SuppressedClickEntity);

/**
 * The clicks module's only way to the database. Clicks are on the hottest path: inserts of
 * concurrent requests leave together (db/batched-insert.ts), and the attribution reads are single
 * index lookups on MikroORM's kysely, outside any transaction.
 */
export class ClicksRepository {
  private readonly inserts: InsertBatcher<NewRow<'clicks'>, undefined>;

  constructor(private readonly orm: MikroORM) {
    this.inserts = new InsertBatcher(
      async (rows) => {
        await INSERT_CLICKS.run(this.orm, rows);
        return rows.map(() => undefined);
      },
      { ...writeBatching(this.orm), groupKey: (row) => row.organization_id },
    );
  }

  /** Stored once this call resolves (its statement committed). */
  insert(row: NewRow<'clicks'>): Promise<void> {
    return this.inserts.add(row);
  }

  /** A click flood's surplus, kept for the record apart from the clicks (never counted, never attributed). */
  async insertSuppressed(row: NewRow<'clicks'>): Promise<void> {
    await INSERT_SUPPRESSED.run(this.orm, [row]);
  }

  /** When and from where a click came, for the fraud rules (modules/conversions/sale-terms.ts caches it). */
  findFacts(
    organizationId: string,
    clickId: string,
  ): Promise<{ occurred_at: Date; ip: string | null; user_agent: string | null } | undefined> {
    return kyselyOf(this.orm)
      .selectFrom('clicks')
      .select(['occurred_at', 'ip', 'user_agent'])
      .where('organization_id', '=', organizationId)
      .where('id', '=', clickId)
      .executeTakeFirst();
  }

  /** The click that issued a cookie, as answered again to a second capture of the same visit (attribution/same-visit.ts). */
  findByCookie(
    organizationId: string,
    cookieId: string,
  ): Promise<
    { id: string; affiliate_id: string; program_id: string; occurred_at: Date; created_at: Date } | undefined
  > {
    return kyselyOf(this.orm)
      .selectFrom('clicks')
      .select(['id', 'affiliate_id', 'program_id', 'occurred_at', 'created_at'])
      .where('organization_id', '=', organizationId)
      .where('cookie_id', '=', cookieId)
      .executeTakeFirst();
  }

  /** What attribution needs of a click this organization issued, by its id or its cookie id. */
  findForAttribution(organizationId: string, by: 'id' | 'cookie_id', value: string): Promise<CachedClick | undefined> {
    return kyselyOf(this.orm)
      .selectFrom('clicks')
      .select(['id', 'affiliate_id', 'program_id', 'occurred_at'])
      .where('organization_id', '=', organizationId)
      .where(by, '=', value)
      .executeTakeFirst();
  }
}
