import { randomUUID } from 'node:crypto';
import type { MikroORM } from '@mikro-orm/postgresql';
import type { ImportSource, ImportTerms, ImportTermsChoice } from '@affiliate-attribution/contract';
import type { Import } from '../../resources.js';
import { ofAnotherAccount } from '../../db/owned-row.js';
import { Db } from '../../db/sql.js';
import { encodeCursor, decodeCursor } from '../../http/pagination.js';
import { ForbiddenError, NotFoundError } from '../../http/errors.js';
import { isUuid } from '../../http/serialize.js';
import type { Counts, Skip } from './import-model.js';
import { emptyCounts } from './import-model.js';
import { sql } from 'kysely';

export interface ImportRow {
  id: string;
  organization_id: string;
  program_id: string;
  source: ImportSource;
  dry_run: boolean;
  status: Import['status'];
  sealed_credentials: string | null;
  progress: { phase: string; pages: number; page?: number; retry?: ImportRetry | null };
  counts: Counts | Record<string, never>;
  skipped: Skip[];
  error: string | null;
  created_at: Date;
  finished_at: Date | null;
  undone_at: Date | null;
  terms: ImportTerms | null;
  terms_choice: ImportTermsChoice | null;
}

/** The next try of an import waiting for its source (progress.retry). */
export interface ImportRetry {
  attempt: number;
  max_attempts: number;
  at: string;
  reason: string;
}

export function toImportDto(row: ImportRow): Import {
  return {
    id: row.id,
    source: row.source,
    program_id: row.program_id,
    dry_run: row.dry_run,
    status: row.status,
    progress: {
      phase: row.progress.phase,
      pages: row.progress.pages,
      retry: row.status === 'running' ? (row.progress.retry ?? null) : null,
    },
    counts: { ...emptyCounts(), ...row.counts },
    skipped: row.skipped,
    error: row.error,
    created_at: row.created_at.toISOString(),
    finished_at: row.finished_at ? row.finished_at.toISOString() : null,
    undone_at: row.undone_at ? row.undone_at.toISOString() : null,
    terms: row.terms,
  };
}

/** The imports table: the module's only way to it (the rows an import writes go through import-writer.ts). */
export class ImportsRepository {
  constructor(private readonly orm: MikroORM) {}

  get db(): Db {
    return Db.of(this.orm);
  }

  async programExists(organizationId: string, programId: string): Promise<boolean> {
    return !!(await this.db.one(
      sql`select 1 from programs where id = ${programId} and organization_id = ${organizationId}`,
    ));
  }

  async insert(
    db: Db,
    row: Pick<
      ImportRow,
      'organization_id' | 'program_id' | 'source' | 'dry_run' | 'sealed_credentials' | 'terms_choice'
    >,
  ): Promise<ImportRow> {
    return (await db.one(
      sql<ImportRow>`insert into imports (id, organization_id, program_id, source, dry_run, status, sealed_credentials, terms_choice) values (${randomUUID()}, ${row.organization_id}, ${row.program_id}, ${row.source}, ${row.dry_run}, 'running', ${row.sealed_credentials}, ${row.terms_choice}) returning *`,
    ))!;
  }

  /** Keeps the terms compared at the start of a running import (in the caller's transaction: with the program's update, if any). */
  async settled(db: Db, id: string, organizationId: string, terms: ImportTerms): Promise<void> {
    await db.rows(
      sql`update imports set terms = ${JSON.stringify(terms)} where id = ${id} and organization_id = ${organizationId} and status = 'running'`,
    );
  }

  /** The ownership rule of every path (db/owned-row.ts): another organization's import 403, none (or only in the other mode) 404. */
  async findOwned(organizationId: string, id: string, db: Db = this.db, lock = false): Promise<ImportRow> {
    if (!isUuid(id)) throw new NotFoundError('Import not found');
    const row = await db.one(
      sql<ImportRow>`select * from imports where id = ${id} and organization_id = ${organizationId}${sql.raw(lock ? ' for update' : '')}`,
    );
    if (row) return row;
    if (await db.one(sql`select 1 from imports i where i.id = ${id} and ${ofAnotherAccount('i', organizationId)}`))
      throw new ForbiddenError('This resource belongs to another organization');
    throw new NotFoundError('Import not found');
  }

  async find(organizationId: string, id: string): Promise<ImportRow | undefined> {
    return this.db.one(sql<ImportRow>`select * from imports where id = ${id} and organization_id = ${organizationId}`);
  }

  async page(
    organizationId: string,
    cursor: string | undefined,
    limit: number,
  ): Promise<{ items: ImportRow[]; next_cursor: string | null }> {
    const after = decodeCursor(cursor);
    const at = after?.at ?? null;
    const rows = await this.db.rows(
      sql<ImportRow>`select * from imports where organization_id = ${organizationId} and (${at}::timestamptz is null or (created_at, id) < (${at}::timestamptz, ${after?.id ?? null}::uuid))
       order by created_at desc, id desc limit ${limit + 1}`,
    );
    const items = rows.slice(0, limit);
    const last = items[items.length - 1];
    return {
      items,
      next_cursor: rows.length > limit && last ? encodeCursor({ at: last.created_at, id: last.id }) : null,
    };
  }

  /**
   * Locks the import's row in the caller's transaction while it is still running: true; false once
   * it was cancelled (or ended). A page's transaction starts with it, so a cancel waits for the page
   * being written to commit, and no page is written after the cancel.
   */
  async lockRunning(db: Db, id: string, organizationId: string): Promise<boolean> {
    return !!(await db.one(
      sql`select 1 from imports where id = ${id} and organization_id = ${organizationId} and status = 'running' for update`,
    ));
  }

  async statusOf(organizationId: string, id: string): Promise<ImportRow['status'] | undefined> {
    return (
      await this.db.one(
        sql<{
          status: ImportRow['status'];
        }>`select status from imports where id = ${id} and organization_id = ${organizationId}`,
      )
    )?.status;
  }

  /** In the page's own transaction (`sql`), so the counts and the rows they count commit together. False: the import is no longer running. */
  async progress(
    db: Db,
    id: string,
    organizationId: string,
    progress: ImportRow['progress'],
    counts: Counts,
    skipped: Skip[],
  ): Promise<boolean> {
    const updated = await db.rows(
      sql`update imports set progress = ${JSON.stringify({ ...progress, retry: null })}, counts = ${JSON.stringify(counts)}, skipped = ${JSON.stringify(skipped)}, error = null where id = ${id} and organization_id = ${organizationId} and status = 'running' returning id`,
    );
    return updated.length > 0;
  }

  /**
   * Records the next try of an import waiting for its source (progress.retry), and why in `error`,
   * so that the wait is visible at once; a page read later clears it (progress()).
   */
  async waiting(id: string, organizationId: string, retry: ImportRetry, error: string): Promise<void> {
    await this.db.rows(
      sql`update imports set progress = jsonb_set(progress, '{retry}', ${JSON.stringify(retry)}::jsonb), error = ${error} where id = ${id} and organization_id = ${organizationId} and status = 'running'`,
    );
  }

  /** Says in `error` why a running import is stopped for now (it is tried again). */
  async note(id: string, organizationId: string, error: string): Promise<void> {
    await this.db.rows(
      sql`update imports set error = ${error} where id = ${id} and organization_id = ${organizationId} and status = 'running'`,
    );
  }

  /** Ends a running import: its credentials are erased, succeeded or failed. */
  async finish(
    id: string,
    organizationId: string,
    status: 'succeeded' | 'failed',
    error: string | null,
    progress?: ImportRow['progress'],
  ): Promise<void> {
    await this.db.rows(
      sql`update imports set status = ${status}, error = ${error}, sealed_credentials = null, finished_at = now(), progress = coalesce(${progress ? JSON.stringify(progress) : null}::jsonb, progress) - 'retry' where id = ${id} and organization_id = ${organizationId} and status = 'running'`,
    );
  }

  /** Cancels a running import in the caller's transaction (its row locked by findOwned): credentials erased. */
  async cancel(db: Db, id: string, organizationId: string): Promise<ImportRow> {
    return (await db.one(
      sql<ImportRow>`update imports set status = 'cancelled', error = null, sealed_credentials = null, finished_at = now(), progress = progress - 'retry' where id = ${id} and organization_id = ${organizationId} and status = 'running' returning *`,
    ))!;
  }
}
