import type { CreateImportBody } from '@affiliate-attribution/contract';
import type { Import } from '../../resources.js';
import type { CacheChange } from '../../db/change-notifications.js';
import { BadRequestError, ConflictError, NotFoundError } from '../../http/errors.js';
import { pageLimit } from '../../http/pagination.js';
import type { SecretBox } from '../../security/secret-box.js';
import { ImportSourceError } from './import-model.js';
import { CREDENTIALS_PURPOSE, type ImportRunner } from './import-runner.js';
import { undoImport } from './import-undo.js';
import { toImportDto, type ImportRow, type ImportsRepository } from './imports.repository.js';
import { IMPLEMENTED_SOURCES, readerFor, type SourceBaseUrls } from './sources/readers.js';
import { addSourceLinkParam } from '../organizations/link-params.js';
import { sql } from 'kysely';

const ENDED: Record<Exclude<Import['status'], 'running'>, string> = {
  succeeded: 'has already succeeded',
  failed: 'has already failed',
  cancelled: 'was already cancelled',
  undone: 'was undone',
};

/** Imports from other platforms: start (queued), follow, list, cancel, undo. */
export class ImportsService {
  constructor(
    private readonly imports: ImportsRepository,
    private readonly runner: ImportRunner,
    private readonly secrets: SecretBox,
    /** This instance's caches (services.ts caches.changed): told what an undo deleted once it commits. */
    private readonly onChange: (change: CacheChange) => void = () => undefined,
  ) {}

  async create(organizationId: string, body: CreateImportBody): Promise<Import> {
    if (!IMPLEMENTED_SOURCES.includes(body.source))
      throw new BadRequestError(
        `source: "${body.source}" is not implemented yet (implemented: ${IMPLEMENTED_SOURCES.join(', ')})`,
      );
    // The credentials' shape is checked now (a missing field is a 400), their validity by the job.
    try {
      readerFor(body.source, body.credentials, {} as SourceBaseUrls);
    } catch (err) {
      if (err instanceof ImportSourceError) throw new BadRequestError(err.message);
      throw err;
    }
    if (!(await this.imports.programExists(organizationId, body.program_id)))
      throw new NotFoundError('Program not found');
    const row = await this.imports.insert(this.imports.db, {
      organization_id: organizationId,
      program_id: body.program_id,
      source: body.source,
      dry_run: body.dry_run,
      sealed_credentials: this.secrets.seal(JSON.stringify(body.credentials), CREDENTIALS_PURPOSE),
      terms_choice: body.terms ?? null,
    });
    // The partners' published links keep working: `?via=` once a Rewardful import ran (issue 47).
    if (!body.dry_run) await addSourceLinkParam(this.imports.db, organizationId, body.source);
    try {
      await this.runner.enqueue(row);
    } catch (err) {
      await this.imports.finish(row.id, organizationId, 'failed', 'the job queue could not take the import');
      throw err;
    }
    return toImportDto(row);
  }

  async get(organizationId: string, id: string): Promise<Import> {
    return toImportDto(await this.imports.findOwned(organizationId, id));
  }

  async list(
    organizationId: string,
    query: { limit?: number; cursor?: string },
  ): Promise<{ imports: Import[]; next_cursor: string | null }> {
    const page = await this.imports.page(organizationId, query.cursor, pageLimit(query.limit));
    return { imports: page.items.map(toImportDto), next_cursor: page.next_cursor };
  }

  /**
   * Cancels a running import (queued, importing, or waiting to try again): `cancelled` at once, its
   * credentials erased. The row lock waits for a page being written to commit; the job writes no
   * page after it (import-runner.ts), so the counts are exactly what was written, and undo removes it.
   */
  async cancel(organizationId: string, id: string): Promise<Import> {
    const row = await this.imports.db.transaction(async (db) => {
      const found = await this.imports.findOwned(organizationId, id, db, true);
      if (found.status !== 'running')
        throw new ConflictError(`The import ${ENDED[found.status]}: only a running import can be cancelled`);
      return this.imports.cancel(db, id, organizationId);
    });
    this.runner.cancelled(row.id);
    return toImportDto(row);
  }

  /**
   * Deletes what the import created, in one transaction; 409 while it runs, once something builds on
   * its rows, or when it was undone already. The import stays listed, `undone`, with its counts.
   */
  async undo(organizationId: string, id: string): Promise<Import> {
    const { row, changes } = await this.imports.db.transaction(async (db) => {
      const found = await this.imports.findOwned(organizationId, id, db, true);
      if (found.status === 'running')
        throw new ConflictError('The import is still running: cancel it first, or undo it once it has finished');
      if (found.status === 'undone') throw new ConflictError('The import was already undone');
      const changes = found.dry_run ? [] : await undoImport(db, organizationId, id);
      const row = (await db.one(
        sql<ImportRow>`update imports set status = 'undone', undone_at = now(), sealed_credentials = null where organization_id = ${organizationId} and id = ${id} returning *`,
      ))!;
      return { row, changes };
    });
    // Committed: this instance's caches drop what the undo deleted (every other one hears it by NOTIFY).
    for (const change of changes) this.onChange(change);
    return toImportDto(row);
  }
}
