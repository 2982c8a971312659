import { randomBytes } from 'node:crypto';
import type { Click } from '../../resources.js';
import { COOKIE_ID_PREFIX } from '../../attribution/resolver.js';
import type { AttributionResolver } from '../referrals/attribution-resolver.js';
import type { ClicksRepository } from './clicks.repository.js';
import { AttributionNotFoundError } from '../../http/errors.js';
import { DomainError } from '../../domain-errors.js';
import { ClickFloodWindows } from './click-flood.js';
import { iso } from '../../http/serialize.js';
import { resolveOccurredAt } from '../../attribution/occurred-at.js';
import { newRowId } from '../../db/row-ids.js';
import { isSameVisit } from '../../attribution/same-visit.js';

const DAY_SECONDS = 86_400;
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
  /** The visitor's current svc_aff cookie: kept under the program's first_click model when valid. */
  cookie_id?: string;
}

export interface ClickResult {
  click: Click;
  /** False when the answer is an earlier click of the same visit and nothing was written. */
  recorded: boolean;
}

export class ClicksService {
  private readonly floods = new ClickFloodWindows();

  constructor(
    private readonly clicks: ClicksRepository,
    private readonly resolver: AttributionResolver,
  ) {}

  /**
   * One insert, batched with the clicks of concurrent requests: the slug and the program's click
   * window come from the resolver's caches. An unknown slug is 404 "No attribution found".
   * The program's rules decide which cookie the visitor keeps: under `first_click` a valid cookie
   * it already has (one more cached resolve, only when a cookie is sent); with `click_flood` on and
   * an address known, a flood's surplus is stored apart (suppressed) and answered with the
   * address's first click of the window (in memory: click-flood.ts). A second capture of the same
   * visit (the cookie is a click of this affiliate made moments before: attribution/same-visit.ts)
   * records nothing and answers that click.
   */
  async create(organizationId: string, input: CreateClickInput): Promise<ClickResult> {
    const occurredAt = resolveOccurredAt(input.occurred_at);
    const affiliate = await this.resolver.affiliateBySlug(organizationId, input.ref);
    if (!affiliate) throw new AttributionNotFoundError();
    const program = await this.resolver.programRule(organizationId, affiliate.program_id);
    const visit = input.cookie_id?.startsWith(COOKIE_ID_PREFIX)
      ? await this.clicks.findByCookie(organizationId, input.cookie_id)
      : undefined;
    if (visit && isSameVisit(visit, affiliate.id, occurredAt)) {
      return {
        click: {
          id: visit.id,
          cookie_id: input.cookie_id!,
          kept_earlier_click: true,
          cookie_max_age_seconds: program.click_window_days * DAY_SECONDS,
          suppressed: false,
          affiliate_id: visit.affiliate_id,
          program_id: visit.program_id,
          occurred_at: iso(visit.occurred_at),
          created_at: iso(visit.created_at),
        },
        recorded: false,
      };
    }
    const id = newRowId();
    const cookieId = generateCookieId();
    const createdAt = new Date();
    const earlier =
      program.attribution_model === 'first_click' && input.cookie_id
        ? await this.validCookie(organizationId, input.cookie_id, occurredAt)
        : undefined;
    const flood =
      program.fraud_rules.click_flood && input.ip
        ? this.floods.observe(organizationId, affiliate.id, input.ip, occurredAt, earlier ?? cookieId)
        : undefined;
    const suppressed = flood?.suppressed === true;
    const answeredCookie = earlier ?? (flood?.suppressed ? flood.firstCookieId : cookieId);
    await (suppressed ? this.clicks.insertSuppressed.bind(this.clicks) : this.clicks.insert.bind(this.clicks))({
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
        cookie_id: answeredCookie,
        kept_earlier_click: answeredCookie !== cookieId,
        cookie_max_age_seconds: program.click_window_days * DAY_SECONDS,
        suppressed,
        affiliate_id: affiliate.id,
        program_id: affiliate.program_id,
        occurred_at: iso(occurredAt),
        created_at: iso(createdAt),
      },
      recorded: true,
    };
  }

  /** The cookie when it still attributes in this organization (a click within its window, or an active slug); else undefined. */
  private async validCookie(organizationId: string, cookieId: string, at: Date): Promise<string | undefined> {
    try {
      await this.resolver.resolveClick(organizationId, { cookie_id: cookieId }, at);
      return cookieId;
    } catch (err) {
      if (err instanceof DomainError && (err.kind === 'not-found' || err.kind === 'expired')) return undefined;
      throw err;
    }
  }
}
