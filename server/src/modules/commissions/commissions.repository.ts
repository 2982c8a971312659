import type { MikroORM } from '@mikro-orm/postgresql';
import type { CommissionEntryType, CommissionStatus } from '@affiliate-attribution/contract';
import { sql as raw, type ExpressionBuilder } from 'kysely';
import { pageNewestFirst } from '../../db/created-order.js';
import { kyselyOf, type NewRow, type StoredRow, type Tables } from '../../db/database.js';
import { findOwnedRow, type OwnedTable } from '../../db/owned-row.js';
import { Sql } from '../../db/sql.js';
import type { CursorPosition } from '../../http/pagination.js';

export type CommissionRecord = StoredRow<'commissions'>;

const COMMISSIONS_BY_ID: OwnedTable = { table: 'commissions', notFound: 'Commission not found' };

export interface CommissionFilter {
  status?: CommissionStatus;
  type?: CommissionEntryType;
  affiliate_id?: string;
  program_id?: string;
  created_after?: Date;
  created_before?: Date;
}

/**
 * The status filter on the stored status, with the ledger's one derived transition
 * (commission-lifecycle.ts effectiveStatus): a pending entry whose approves_at has passed is approved.
 */
function whereEffectiveStatus(status: CommissionStatus) {
  return (eb: ExpressionBuilder<Tables, 'commissions'>) => {
    const due = eb.and([eb('status', '=', 'pending'), eb('approves_at', '<=', raw<Date>`now()`)]);
    if (status === 'approved') return eb.or([eb('status', '=', 'approved'), due]);
    if (status === 'pending') return eb.and([eb('status', '=', 'pending'), eb.not(due)]);
    return eb('status', '=', status);
  };
}

/** The commissions module's only way to the database. */
export class CommissionsRepository {
  constructor(private readonly orm: MikroORM) {}

  insert(row: NewRow<'commissions'>): Promise<CommissionRecord> {
    return kyselyOf(this.orm).insertInto('commissions').values(row).returningAll().executeTakeFirstOrThrow();
  }

  /** One page of the organization's entries, newest first. */
  page(organizationId: string, filter: CommissionFilter, after: CursorPosition | undefined, limit: number): Promise<CommissionRecord[]> {
    let query = kyselyOf(this.orm).selectFrom('commissions').selectAll().where('organization_id', '=', organizationId);
    if (filter.status) query = query.where(whereEffectiveStatus(filter.status));
    if (filter.type) query = query.where('type', '=', filter.type);
    if (filter.affiliate_id) query = query.where('affiliate_id', '=', filter.affiliate_id);
    if (filter.program_id) query = query.where('program_id', '=', filter.program_id);
    if (filter.created_after) query = query.where('created_at', '>=', filter.created_after);
    if (filter.created_before) query = query.where('created_at', '<', filter.created_before);
    return pageNewestFirst(query, after, limit).execute();
  }

  /** The affiliate credited by an adjustment, with its program's currency; undefined unless it is this organization's. */
  findAffiliate(organizationId: string, affiliateId: string): Promise<{ id: string; program_id: string; currency: string } | undefined> {
    return kyselyOf(this.orm)
      .selectFrom('affiliates as a')
      .innerJoin('programs as p', 'p.id', 'a.program_id')
      .select(['a.id', 'a.program_id', 'p.currency'])
      .where('a.organization_id', '=', organizationId)
      .where('a.id', '=', affiliateId)
      .executeTakeFirst();
  }

  /** The ownership rule (db/owned-row.ts): 403 for another organization's entry, 404 for none. */
  findOwned(organizationId: string, id: string): Promise<CommissionRecord> {
    return findOwnedRow<CommissionRecord>(Sql.of(this.orm), COMMISSIONS_BY_ID, organizationId, id);
  }

  /**
   * Changes an owned entry in one transaction, its row locked: `change` decides from the stored
   * row (and may refuse, or answer undefined for no change); concurrent changes, a payout taking
   * the entry or a refund reducing it, wait for this one and see its outcome.
   */
  updateOwned(
    organizationId: string,
    id: string,
    change: (current: CommissionRecord) => Partial<Pick<CommissionRecord, 'status' | 'approved_at' | 'rejection_reason'>> | undefined,
  ): Promise<CommissionRecord> {
    return Sql.of(this.orm).transaction(async (sql) => {
      const found = await findOwnedRow<CommissionRecord>(sql, COMMISSIONS_BY_ID, organizationId, id);
      const [current] = await sql.execute(kyselyOf(this.orm).selectFrom('commissions').selectAll().where('id', '=', found.id).forUpdate());
      const changes = change(current!);
      if (!changes) return current!;
      const [updated] = await sql.execute(
        kyselyOf(this.orm)
          .updateTable('commissions')
          .set({ ...changes, updated_at: raw<Date>`now()` })
          .where('id', '=', found.id)
          .returningAll(),
      );
      return updated!;
    });
  }
}
