import { randomBytes, randomUUID } from 'node:crypto';
import type { InferEntity } from '@mikro-orm/core';
import type { EntityManager, MikroORM } from '@mikro-orm/postgresql';
import type { Affiliate } from '@affiliate-attribution/contract';
import { Sql, isUniqueViolation } from '../../db/sql.js';
import { ConflictError, ForbiddenError, NotFoundError } from '../../http/errors.js';
import { decodeCursor, pageLimit, pageOf } from '../../http/pagination.js';
import { iso, isUuid } from '../../http/serialize.js';
import { AffiliateEntity } from './affiliate.entity.js';

type AffiliateRecord = InferEntity<typeof AffiliateEntity>;

export function toAffiliateDto(a: AffiliateRecord): Affiliate {
  return {
    id: a.id,
    email: a.email,
    name: a.name ?? null,
    program_id: a.program_id,
    slug: a.slug,
    created_at: iso(a.created_at),
  };
}

export interface CreateAffiliateInput {
  email: string;
  program_id: string;
  slug?: string;
  name?: string;
}

/** A readable slug from the e-mail's local part plus a random suffix: `jane-doe-x7k2`. */
export function generateSlug(email: string): string {
  const base = email
    .split('@')[0]
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 40);
  const suffix = randomBytes(4).readUInt32BE(0).toString(36).padStart(6, '0').slice(-6);
  return base.length >= 2 ? `${base}-${suffix}` : `aff-${suffix}`;
}

const INSERT_AFFILIATE = `insert into affiliates (id, organization_id, program_id, email, name, slug, created_at)
  values (?, ?, ?, ?, ?, ?, ?)
  on conflict (organization_id, program_id, email) do nothing
  returning *`;

export class AffiliatesService {
  constructor(private readonly orm: MikroORM) {}

  /** A fresh EntityManager per use case: its identity map and unit of work serve that call only. */
  private em(): EntityManager {
    return this.orm.em.fork();
  }

  /**
   * Idempotent per (email, program): the membership unique key decides, so concurrent identical
   * requests create one row. E-mails compare case-insensitively (stored lower case).
   */
  async create(organizationId: string, input: CreateAffiliateInput): Promise<{ affiliate: Affiliate; deduped: boolean }> {
    const sql = Sql.of(this.orm);
    const email = input.email.trim().toLowerCase();
    const program = isUuid(input.program_id)
      ? await sql.one<{ organization_id: string }>('select organization_id from programs where id = ?', [input.program_id])
      : undefined;
    if (!program || program.organization_id !== organizationId) throw new NotFoundError('Program not found');

    const existing = await this.findMembership(sql, organizationId, input.program_id, email);
    if (existing) return { affiliate: toAffiliateDto(existing), deduped: true };

    for (let attempt = 0; attempt < 5; attempt++) {
      const slug = input.slug ?? generateSlug(email);
      try {
        const inserted = await sql.one<AffiliateRecord>(INSERT_AFFILIATE, [
          randomUUID(),
          organizationId,
          input.program_id,
          email,
          input.name ?? null,
          slug,
          new Date(),
        ]);
        if (inserted) return { affiliate: toAffiliateDto(inserted), deduped: false };
      } catch (err) {
        if (!isUniqueViolation(err, 'affiliates_slug_unique')) throw err;
        // The slug may have been taken by this very membership in a concurrent request.
        const raced = await this.findMembership(sql, organizationId, input.program_id, email);
        if (raced) return { affiliate: toAffiliateDto(raced), deduped: true };
        if (input.slug) throw new ConflictError(`slug: "${input.slug}" is already taken`);
        continue;
      }
      const raced = await this.findMembership(sql, organizationId, input.program_id, email);
      if (raced) return { affiliate: toAffiliateDto(raced), deduped: true };
    }
    throw new Error('could not allocate a unique slug');
  }

  async list(
    organizationId: string,
    query: { limit?: number; cursor?: string; program_id?: string; email?: string },
  ): Promise<{ affiliates: Affiliate[]; next_cursor: string | null }> {
    const limit = pageLimit(query.limit);
    const after = decodeCursor(query.cursor);
    const rows = await this.em().find(
      AffiliateEntity,
      {
        organization_id: organizationId,
        ...(query.program_id ? { program_id: query.program_id } : {}),
        ...(query.email ? { email: query.email.trim().toLowerCase() } : {}),
        ...(after ? { $or: [{ created_at: { $gt: after.at } }, { created_at: after.at, id: { $gt: after.id } }] } : {}),
      },
      { orderBy: { created_at: 'asc', id: 'asc' }, limit: limit + 1 },
    );
    const page = pageOf(rows, limit, (a) => ({ at: a.created_at, id: a.id }));
    return { affiliates: page.items.map(toAffiliateDto), next_cursor: page.next_cursor };
  }

  async get(organizationId: string, id: string): Promise<Affiliate> {
    const affiliate = isUuid(id) ? await this.em().findOne(AffiliateEntity, { id }) : null;
    if (!affiliate) throw new NotFoundError('Affiliate not found');
    if (affiliate.organization_id !== organizationId) throw new ForbiddenError();
    return toAffiliateDto(affiliate);
  }

  private findMembership(sql: Sql, organizationId: string, programId: string, email: string): Promise<AffiliateRecord | undefined> {
    return sql.one<AffiliateRecord>('select * from affiliates where organization_id = ? and program_id = ? and email = ?', [
      organizationId,
      programId,
      email,
    ]);
  }
}
