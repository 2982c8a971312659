import { randomBytes, randomUUID } from 'node:crypto';
import type { Click } from '@affiliate-attribution/contract';
import { COOKIE_ID_PREFIX, type AttributionResolver } from '../../attribution/resolver.js';
import type { ClicksRepository } from './clicks.repository.js';
import { AttributionNotFoundError } from '../../http/errors.js';
import { iso } from '../../http/serialize.js';
import { resolveOccurredAt } from '../../attribution/occurred-at.js';

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

/** `ck_` + 22 base62 characters (about 131 bits): opaque, unguessable, never a valid slug. */
export function generateCookieId(): string {
  const bytes = randomBytes(22);
  let id = COOKIE_ID_PREFIX;
  for (const byte of bytes) id += BASE62[byte % 62];
  return id;
}

export interface CreateClickInput {
  ref: string;
  landing_url?: string;
  referrer?: string;
  user_agent?: string;
  ip?: string;
  occurred_at?: string;
}

export interface ClickResult {
  click: Click;
  /** The program's click window, so that the snippet can size the cookie's lifetime. */
  click_window_days: number;
}

export class ClicksService {
  constructor(
    private readonly clicks: ClicksRepository,
    private readonly resolver: AttributionResolver,
  ) {}

  /**
   * One insert, batched with the clicks of concurrent requests: the slug and the program's click
   * window come from the resolver's caches. An unknown slug is 404 "No attribution found".
   */
  async create(organizationId: string, input: CreateClickInput): Promise<ClickResult> {
    const occurredAt = resolveOccurredAt(input.occurred_at);
    const affiliate = await this.resolver.affiliateBySlug(organizationId, input.ref);
    if (!affiliate) throw new AttributionNotFoundError();
    const program = await this.resolver.programRule(affiliate.program_id);
    const id = randomUUID();
    const cookieId = generateCookieId();
    const createdAt = new Date();
    await this.clicks.insert({
      id,
      organization_id: organizationId,
      affiliate_id: affiliate.id,
      program_id: affiliate.program_id,
      cookie_id: cookieId,
      landing_url: input.landing_url ?? null,
      referrer: input.referrer ?? null,
      user_agent: input.user_agent ?? null,
      ip: input.ip ?? null,
      occurred_at: occurredAt,
      created_at: createdAt,
    });
    return {
      click: {
        id,
        cookie_id: cookieId,
        affiliate_id: affiliate.id,
        program_id: affiliate.program_id,
        occurred_at: iso(occurredAt),
        created_at: iso(createdAt),
      },
      click_window_days: program.click_window_days,
    };
  }
}
