import { randomUUID } from 'node:crypto';
import type { InferEntity } from '@mikro-orm/core';
import type { EntityManager, MikroORM } from '@mikro-orm/postgresql';
import type { Program } from '@affiliate-attribution/contract';
import { ForbiddenError, NotFoundError } from '../../http/errors.js';
import { decodeCursor, pageLimit, pageOf } from '../../http/pagination.js';
import { decimalToNumber, iso, isUuid } from '../../http/serialize.js';
import { ProgramEntity } from './program.entity.js';
import type { AttributionResolver } from '../../attribution/resolver.js';
import { assertCommissionRule } from '../../attribution/commission.js';
import { notifyChange } from '../../db/change-notifications.js';

type ProgramRecord = InferEntity<typeof ProgramEntity>;

export const PROGRAM_DEFAULTS = {
  commission_type: 'percent',
  click_window_days: 60,
  commission_window_months: null,
  currency: 'USD',
} as const;

export interface ProgramInput {
  name: string;
  commission_type?: 'percent' | 'flat';
  commission_value: number;
  click_window_days?: number;
  commission_window_months?: number | null;
  currency?: string;
}

export function toProgramDto(p: ProgramRecord): Program {
  return {
    id: p.id,
    name: p.name,
    commission_type: p.commission_type,
    commission_value: decimalToNumber(p.commission_value),
    click_window_days: p.click_window_days,
    commission_window_months: p.commission_window_months ?? null,
    currency: p.currency,
    created_at: iso(p.created_at),
    updated_at: iso(p.updated_at),
  };
}

export class ProgramsService {
  constructor(
    private readonly orm: MikroORM,
    private readonly resolver: AttributionResolver,
  ) {}

  /** A fresh EntityManager per use case: its identity map and unit of work serve that call only. */
  private em(): EntityManager {
    return this.orm.em.fork();
  }

  async create(organizationId: string, input: ProgramInput): Promise<Program> {
    const now = new Date();
    const em = this.em();
    assertCommissionRule({ commission_type: input.commission_type ?? PROGRAM_DEFAULTS.commission_type, commission_value: input.commission_value });
    const program = em.create(ProgramEntity, {
      id: randomUUID(),
      organization_id: organizationId,
      name: input.name,
      commission_type: input.commission_type ?? PROGRAM_DEFAULTS.commission_type,
      commission_value: String(input.commission_value),
      click_window_days: input.click_window_days ?? PROGRAM_DEFAULTS.click_window_days,
      commission_window_months: input.commission_window_months ?? PROGRAM_DEFAULTS.commission_window_months,
      currency: (input.currency ?? PROGRAM_DEFAULTS.currency).toUpperCase(),
      created_at: now,
      updated_at: now,
    });
    await em.flush();
    return toProgramDto(program);
  }

  async list(organizationId: string, query: { limit?: number; cursor?: string }): Promise<{ programs: Program[]; next_cursor: string | null }> {
    const limit = pageLimit(query.limit);
    const after = decodeCursor(query.cursor);
    const rows = await this.em().find(
      ProgramEntity,
      after
        ? { organization_id: organizationId, $or: [{ created_at: { $gt: after.at } }, { created_at: after.at, id: { $gt: after.id } }] }
        : { organization_id: organizationId },
      { orderBy: { created_at: 'asc', id: 'asc' }, limit: limit + 1 },
    );
    const page = pageOf(rows, limit, (p) => ({ at: p.created_at, id: p.id }));
    return { programs: page.items.map(toProgramDto), next_cursor: page.next_cursor };
  }

  async get(organizationId: string, id: string): Promise<Program> {
    return toProgramDto(await this.findOwned(this.em(), organizationId, id));
  }

  /**
   * Every instance caches program rules (attribution/cache.ts): the change notification goes out
   * in the update's own transaction, so every instance drops its copy once it commits; this one
   * drops its own at once, before answering.
   */
  async update(organizationId: string, id: string, input: Partial<ProgramInput>): Promise<Program> {
    const program = await this.em().transactional(async (em) => {
      const program = await this.findOwned(em, organizationId, id);
      if (input.name !== undefined) program.name = input.name;
      if (input.commission_type !== undefined) program.commission_type = input.commission_type;
      if (input.commission_value !== undefined) program.commission_value = String(input.commission_value);
      if (input.click_window_days !== undefined) program.click_window_days = input.click_window_days;
      if (input.commission_window_months !== undefined) program.commission_window_months = input.commission_window_months;
      if (input.currency !== undefined) program.currency = input.currency.toUpperCase();
      assertCommissionRule(program);
      program.updated_at = new Date();
      await em.flush();
      await notifyChange((query, params) => em.execute(query, params), { kind: 'program', id: program.id });
      return program;
    });
    this.resolver.forgetProgram(program.id);
    return toProgramDto(program);
  }

  /** 404 when no such program exists anywhere, 403 when it belongs to another organization. */
  private async findOwned(em: EntityManager, organizationId: string, id: string): Promise<ProgramRecord> {
    const program = isUuid(id) ? await em.findOne(ProgramEntity, { id }) : null;
    if (!program) throw new NotFoundError('Program not found');
    if (program.organization_id !== organizationId) throw new ForbiddenError();
    return program;
  }
}
