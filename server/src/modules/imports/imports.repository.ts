import { randomUUID } from 'node:crypto';
import type { MikroORM } from '@mikro-orm/postgresql';
import type { ImportSource, ImportTerms, ImportTermsChoice } from '@affiliate-attribution/contract';
import type { Import } from '../../resources.js';
import { ofAnotherAccount } from '../../db/owned-row.js';
import { Sql } from '../../db/sql.js';
import { encodeCursor, decodeCursor } from '../../http/pagination.js';
import { ForbiddenError, NotFoundError } from '../../http/errors.js';
import { isUuid } from '../../http/serialize.js';
import type { Counts, Skip } from './import-model.js';
import { emptyCounts } from './import-model.js';

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

  get sql(): Sql {
    return Sql.of(this.orm);
  }

  async programExists(organizationId: string, programId: string): Promise<boolean> {
    return !!(await this.sql.one(`select 1 from programs where id = $1 and organization_id = $2`, [
      programId,
      organizationId,
    ]));
  }

  async insert(
    sql: Sql,
    row: Pick<
      ImportRow,
      'organization_id' | 'program_id' | 'source' | 'dry_run' | 'sealed_credentials' | 'terms_choice'
    >,
  ): Promise<ImportRow> {
    return (await sql.one<ImportRow>(
      `insert into imports (id, organization_id, program_id, source, dry_run, status, sealed_credentials, terms_choice) values ($1, $2, $3, $4, $5, 'running', $6, $7) returning *`,
      [
        randomUUID(),
        row.organization_id,
        row.program_id,
        row.source,
        row.dry_run,
        row.sealed_credentials,
        row.terms_choice,
      ],
    ))!;
  }

  /** Keeps the terms compared at the start of a running import (in the caller's transaction: with the program's update, if any). */
  async settled(sql: Sql, id: string, organizationId: string, terms: ImportTerms): Promise<void> {
    await sql.rows(`update imports set terms = $3 where id = $1 and organization_id = $2 and status = 'running'`, [
      id,
      organizationId,
      JSON.stringify(terms),
    ]);
  }

  /** The ownership rule of every path (db/owned-row.ts): another organization's import 403, none (or only in the other mode) 404. */
  async findOwned(organizationId: string, id: string, sql: Sql = this.sql, lock = false): Promise<ImportRow> {
    if (!isUuid(id)) throw new NotFoundError('Import not found');
    const row = await sql.one<ImportRow>(
      `select * from imports where id = $1 and organization_id = $2${lock ? ' for update' : ''}`,
      [id, organizationId],
    );
    if (row) return row;
    if (
      await sql.one(`select 1 from imports i where i.id = $1 and ${ofAnotherAccount('i', '$2')}`, [id, organizationId])
    )
      throw new ForbiddenError('This resource belongs to another organization');
    throw new NotFoundError('Import not found');
  }

  async find(organizationId: string, id: string): Promise<ImportRow | undefined> {
    return this.sql.one<ImportRow>(`select * from imports where id = $1 and organization_id = $2`, [
      id,
      organizationId,
    ]);
  }

  async page(
    organizationId: string,
    cursor: string | undefined,
    limit: number,
  ): Promise<{ items: ImportRow[]; next_cursor: string | null }> {
    const after = decodeCursor(cursor);
    const rows = await this.sql.rows<ImportRow>(
      `select * from imports where organization_id = $1 and ($2::timestamptz is null or (created_at, id) < ($2::timestamptz, $3::uuid))
       order by created_at desc, id desc limit $4`,
      [organizationId, after?.at ?? null, after?.id ?? null, limit + 1],
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
  async lockRunning(sql: Sql, id: string, organizationId: string): Promise<boolean> {
    return !!(await sql.one(
      `select 1 from imports where id = $1 and organization_id = $2 and status = 'running' for update`,
      [id, organizationId],
    ));
  }

  async statusOf(organizationId: string, id: string): Promise<ImportRow['status'] | undefined> {
    return (
      await this.sql.one<{ status: ImportRow['status'] }>(
        `select status from imports where id = $1 and organization_id = $2`,
        [id, organizationId],
      )
    )?.status;
  }

  /** In the page's own transaction (`sql`), so the counts and the rows they count commit together. False: the import is no longer running. */
  async progress(
    sql: Sql,
    id: string,
    organizationId: string,
    progress: ImportRow['progress'],
    counts: Counts,
    skipped: Skip[],
  ): Promise<boolean> {
    const updated = await sql.rows(
      `update imports set progress = $3, counts = $4, skipped = $5, error = null where id = $1 and organization_id = $2 and status = 'running' returning id`,
      [
        id,
        organizationId,
        JSON.stringify({ ...progress, retry: null }),
        JSON.stringify(counts),
        JSON.stringify(skipped),
      ],
    );
    return updated.length > 0;
  }

  /**
   * Records the next try of an import waiting for its source (progress.retry), and why in `error`,
   * so that the wait is visible at once; a page read later clears it (progress()).
   */
  async waiting(id: string, organizationId: string, retry: ImportRetry, error: string): Promise<void> {
    await this.sql.rows(
      `update imports set progress = jsonb_set(progress, '{retry}', $3::jsonb), error = $4 where id = $1 and organization_id = $2 and status = 'running'`,
      [id, organizationId, JSON.stringify(retry), error],
    );
  }

  /** Says in `error` why a running import is stopped for now (it is tried again). */
  async note(id: string, organizationId: string, error: string): Promise<void> {
    await this.sql.rows(`update imports set error = $3 where id = $1 and organization_id = $2 and status = 'running'`, [
      id,
      organizationId,
      error,
    ]);
  }

  /** Ends a running import: its credentials are erased, succeeded or failed. */
  async finish(
    id: string,
    organizationId: string,
    status: 'succeeded' | 'failed',
    error: string | null,
    progress?: ImportRow['progress'],
  ): Promise<void> {
    await this.sql.rows(
      `update imports set status = $3, error = $4, sealed_credentials = null, finished_at = now(), progress = coalesce($5::jsonb, progress) - 'retry' where id = $1 and organization_id = $2 and status = 'running'`,
      [id, organizationId, status, error, progress ? JSON.stringify(progress) : null],
    );
  }

  /** Cancels a running import in the caller's transaction (its row locked by findOwned): credentials erased. */
  async cancel(sql: Sql, id: string, organizationId: string): Promise<ImportRow> {
    return (await sql.one<ImportRow>(
      `update imports set status = 'cancelled', error = null, sealed_credentials = null, finished_at = now(), progress = progress - 'retry' where id = $1 and organization_id = $2 and status = 'running' returning *`,
      [id, organizationId],
    ))!;
  }
}
