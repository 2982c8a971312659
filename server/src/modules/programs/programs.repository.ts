import type { MikroORM } from '@mikro-orm/postgresql';
import type { ProgramRule } from '../../attribution/cache.js';
import { notifyChange } from '../../db/change-notifications.js';
import { pageInCreationOrder } from '../../db/created-order.js';
import { kyselyOf, readFromReplica, type NewRow, type StoredRow } from '../../db/database.js';
import { findOwnedRow, type OwnedTable } from '../../db/owned-row.js';
import { Db } from '../../db/sql.js';
import type { CursorPosition } from '../../http/pagination.js';
import { sql } from 'kysely';

export type ProgramRecord = StoredRow<'programs'>;

/** The columns a change to a program may write. */
export type ProgramChanges = Pick<
  ProgramRecord,
  | 'name'
  | 'commission_type'
  | 'commission_value'
  | 'click_window_days'
  | 'commission_window_months'
  | 'currency'
  | 'hold_days'
  | 'auto_approve'
  | 'minimum_payout'
  | 'attribution_model'
  | 'commission_max_conversions'
  | 'commission_tiers'
  | 'fraud_rules'
  | 'signup'
  | 'terms'
  | 'website_url'
  | 'updated_at'
>;

const PROGRAMS_BY_ID: OwnedTable = { table: 'programs', notFound: 'Program not found' };

/** The programs module's only way to the database. */
export class ProgramsRepository {
  constructor(private readonly orm: MikroORM) {}

  insert(row: NewRow<'programs'>): Promise<ProgramRecord> {
    return kyselyOf(this.orm).insertInto('programs').values(row).returningAll().executeTakeFirstOrThrow();
  }

  /** One page of the organization's programs, oldest first (db/created-order.ts). */
  page(organizationId: string, after: CursorPosition | undefined, limit: number): Promise<ProgramRecord[]> {
    return readFromReplica(this.orm, 'GET /api/programs', (source) => {
      const query = kyselyOf(source).selectFrom('programs').selectAll().where('organization_id', '=', organizationId);
      return pageInCreationOrder(query, after, limit).execute();
    });
  }

  /** The ownership rule (db/owned-row.ts): 403 for another organization's program, 404 for none. */
  findOwned(organizationId: string, id: string): Promise<ProgramRecord> {
    return findOwnedRow<ProgramRecord>(Db.of(this.orm), PROGRAMS_BY_ID, organizationId, id);
  }

  /**
   * Changes an owned program in one transaction: `change` decides the new values from the stored
   * ones (and may refuse), and the change notification goes out with the update, so every
   * instance drops its cached rule once it commits (db/change-notifications.ts).
   */
  updateOwned(
    organizationId: string,
    id: string,
    change: (current: ProgramRecord) => ProgramChanges,
  ): Promise<ProgramRecord> {
    return Db.of(this.orm).transaction(async (db) => {
      const current = await findOwnedRow<ProgramRecord>(db, PROGRAMS_BY_ID, organizationId, id);
      const changes = change(current);
      const [updated] = await db.rows(
        kyselyOf(this.orm).updateTable('programs').set(changes).where('id', '=', current.id).returningAll(),
      );
      if (changes.commission_max_conversions != null && current.commission_max_conversions == null) {
        // A cap by count set now counts what its customers were paid already (ConversionsService
        // counts from then on, in the guarded write that decides each charge).
        await db.rows(sql`update customers c set paid_conversions = (select count(*) from conversions v
             where v.organization_id = c.organization_id and v.customer_id = c.customer_id and v.amount > 0)
           where c.organization_id = ${organizationId} and c.program_id = ${current.id}`);
      }
      await notifyChange(db, { kind: 'program', id: current.id });
      return updated;
    });
  }

  /** What attribution needs of a program (modules/referrals/attribution-resolver.ts caches it). */
  findRule(organizationId: string, id: string): Promise<ProgramRule | undefined> {
    return kyselyOf(this.orm)
      .selectFrom('programs')
      .select([
        'commission_type',
        'commission_value',
        'click_window_days',
        'commission_window_months',
        'currency',
        'hold_days',
        'auto_approve',
        'attribution_model',
        'commission_max_conversions',
        'commission_tiers',
        'fraud_rules',
      ])
      .where('organization_id', '=', organizationId)
      .where('id', '=', id)
      .executeTakeFirst();
  }
}
