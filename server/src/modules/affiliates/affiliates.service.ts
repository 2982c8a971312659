import { assertCommissionRule } from '../../attribution/commission.js';
import { randomBytes } from 'node:crypto';
import type { UpdateAffiliateBody } from '@affiliate-attribution/contract';
import type { Affiliate } from '../../resources.js';
import type { AttributionResolver } from '../referrals/attribution-resolver.js';
import { ConflictError, NotFoundError } from '../../http/errors.js';
import { decodeCursor, pageLimit, pageOf } from '../../http/pagination.js';
import { decimalToNumber, iso } from '../../http/serialize.js';
import { SlugTakenError, type AffiliateRecord, type AffiliatesRepository } from './affiliates.repository.js';
import { newRowId } from '../../db/row-ids.js';
import { taxFormOf } from '../tax-forms/tax-form-rules.js';

export function toAffiliateDto(a: AffiliateRecord): Affiliate {
  return {
    id: a.id,
    email: a.email,
    name: a.name ?? null,
    program_id: a.program_id,
    slug: a.slug,
    status: a.status,
    payout_email: a.payout_email ?? null,
    payout_method: a.payout_method ?? 'manual',
    stripe_account_id: a.stripe_account_id ?? null,
    commission_value: a.commission_value == null ? null : decimalToNumber(a.commission_value),
    tax_form: taxFormOf(a),
    created_at: iso(a.created_at),
  };
}

export interface CreateAffiliateInput {
  email: string;
  program_id: string;
  slug?: string;
  name?: string;
  payout_email?: string;
  payout_method?: Affiliate['payout_method'];
  stripe_account_id?: string;
  commission_value?: number;
  /** Default `active`; `pending` for an application to a program that approves its partners (modules/partners). */
  status?: 'active' | 'pending';
  /** When the partner accepted the program's terms (an application through the join page). */
  terms_accepted_at?: Date;
}

/** One affiliate with its aliases: its other link tokens (modules/affiliates/link-tokens.ts). */
export interface AffiliateDetail {
  affiliate: Affiliate;
  aliases: string[];
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

/** Generated slugs tried before giving up (their random suffix makes a collision rare). */
const SLUG_ATTEMPTS = 5;

/** A membership's status changed (an application approved or rejected, a partner disabled or enabled). */
export interface AffiliateStatusChange {
  organizationId: string;
  previous: Affiliate['status'];
  affiliate: Affiliate;
  /** The service's base URL as the request that changed it reached it (links in e-mails). */
  baseUrl: string;
}

export class AffiliatesService {
  /** Told of every status change once it is committed (the partner portal e-mails the partner). */
  readonly statusListeners: ((change: AffiliateStatusChange) => Promise<void>)[] = [];

  constructor(
    private readonly affiliates: AffiliatesRepository,
    /** This instance's attribution caches: a status change drops the affiliate's cached status at once. */
    private readonly attribution: Pick<AttributionResolver, 'forgetAffiliate' | 'forgetAffiliateLinks' | 'programRule'>,
  ) {}

  /**
   * Idempotent per (email, program): a repeat is answered from the read that checks the program,
   * and the membership unique key decides between concurrent requests (db/insert-once.ts), which
   * create one row. E-mails compare case-insensitively (stored lower case). A program of another
   * organization is 404, as if it did not exist.
   */
  async create(
    organizationId: string,
    input: CreateAffiliateInput,
  ): Promise<{ affiliate: Affiliate; deduped: boolean }> {
    const email = input.email.trim().toLowerCase();
    const { programFound, membership } = await this.affiliates.findMembership(organizationId, input.program_id, email);
    if (!programFound) throw new NotFoundError('Program not found');
    if (membership) return { affiliate: toAffiliateDto(membership), deduped: true };
    if (input.commission_value !== undefined)
      await this.assertOwnRate(organizationId, input.program_id, input.commission_value);
    for (let attempt = 0; attempt < SLUG_ATTEMPTS; attempt++) {
      const slug = input.slug ?? generateSlug(email);
      try {
        const { row, deduped } = await this.affiliates.insertMembership({
          id: newRowId(),
          organization_id: organizationId,
          program_id: input.program_id,
          email,
          name: input.name ?? null,
          slug,
          status: input.status ?? 'active',
          terms_accepted_at: input.terms_accepted_at ?? null,
          payout_email: input.payout_email?.trim().toLowerCase() ?? null,
          payout_method: input.payout_method ?? 'manual',
          stripe_account_id: input.stripe_account_id ?? null,
          commission_value: input.commission_value === undefined ? null : String(input.commission_value),
          created_at: new Date(),
        });
        return { affiliate: toAffiliateDto(row), deduped };
      } catch (err) {
        if (!(err instanceof SlugTakenError)) throw err;
        if (input.slug) throw new ConflictError(`slug: "${input.slug}" is already taken`);
      }
    }
    throw new Error('could not allocate a unique slug');
  }

  async list(
    organizationId: string,
    query: { limit?: number; cursor?: string; program_id?: string; email?: string },
  ): Promise<{ affiliates: Affiliate[]; next_cursor: string | null }> {
    const limit = pageLimit(query.limit);
    const filter = { program_id: query.program_id, email: query.email?.trim().toLowerCase() };
    const rows = await this.affiliates.page(organizationId, filter, decodeCursor(query.cursor), limit);
    const page = pageOf(rows, limit, (a) => ({ at: a.created_at, id: a.id }));
    return { affiliates: page.items.map(toAffiliateDto), next_cursor: page.next_cursor };
  }

  /**
   * Name, payout e-mail, slug, status: the fields given, the rest unchanged (403/404 by the
   * ownership rule). A new slug keeps the old one as an alias (link-tokens.ts moveSlug). Approving an application or disabling a partner is a status change; it takes effect on
   * this instance's attribution at once, on the others when its notification arrives.
   */
  async update(
    organizationId: string,
    id: string,
    input: UpdateAffiliateBody,
    context: { baseUrl: string },
  ): Promise<AffiliateDetail> {
    if (input.commission_value != null)
      await this.assertOwnRate(
        organizationId,
        (await this.affiliates.findOwned(organizationId, id)).program_id,
        input.commission_value,
      );
    let previous: Affiliate['status'] | undefined;
    const updated = await this.slugChange(input.slug, () =>
      this.affiliates.updateOwned(
        organizationId,
        id,
        (current) => (
          (previous = current.status),
          {
            name: input.name !== undefined ? input.name : current.name,
            payout_email:
              input.payout_email !== undefined
                ? (input.payout_email?.trim().toLowerCase() ?? null)
                : current.payout_email,
            slug: input.slug ?? current.slug,
            status: input.status ?? current.status,
            payout_method: input.payout_method ?? current.payout_method,
            stripe_account_id:
              input.stripe_account_id !== undefined ? input.stripe_account_id : current.stripe_account_id,
            commission_value:
              input.commission_value !== undefined
                ? input.commission_value === null
                  ? null
                  : String(input.commission_value)
                : current.commission_value,
          }
        ),
      ),
    );
    // Its slugs cached here name it still (the old slug is an alias now): dropped all the same, as
    // every other instance drops them when the change's notification arrives.
    if (input.slug !== undefined) this.attribution.forgetAffiliateLinks(updated.id);
    this.attribution.forgetAffiliate(updated.id);
    const affiliate = toAffiliateDto(updated);
    if (previous !== undefined && previous !== affiliate.status) {
      for (const listener of this.statusListeners)
        await listener({ organizationId, previous, affiliate, baseUrl: context.baseUrl });
    }
    return { affiliate, aliases: await this.affiliates.aliases(organizationId, updated.id) };
  }

  /** A slug another affiliate holds (as its slug or an alias) is 409. */
  private async slugChange<T>(slug: string | undefined, change: () => Promise<T>): Promise<T> {
    try {
      return await change();
    } catch (err) {
      if (err instanceof SlugTakenError) throw new ConflictError(`slug: "${slug}" is already taken`);
      throw err;
    }
  }

  /**
   * Erases a partner's personal details on request (affiliates.repository.ts eraseOwned). No
   * status listener runs: nothing is sent to a person whose details are gone.
   */
  async erase(organizationId: string, id: string): Promise<Affiliate> {
    const { erased, ids } = await this.affiliates.eraseOwned(organizationId, id, new Date());
    for (const erasedId of ids) this.attribution.forgetAffiliateLinks(erasedId);
    return toAffiliateDto(erased);
  }

  /** An affiliate's own rate obeys its program's commission rule (a percent at most 100). */
  private async assertOwnRate(organizationId: string, programId: string, value: number): Promise<void> {
    const program = await this.attribution.programRule(organizationId, programId);
    assertCommissionRule({ commission_type: program.commission_type, commission_value: value });
  }

  /** 404 when no such affiliate exists anywhere, 403 when it belongs to another organization. */
  async get(organizationId: string, id: string): Promise<Affiliate> {
    return toAffiliateDto(await this.affiliates.findOwned(organizationId, id));
  }

  /** The affiliate with its aliases (GET /api/affiliates/{id}). */
  async detail(organizationId: string, id: string): Promise<AffiliateDetail> {
    const { affiliate, aliases } = await this.affiliates.findOwnedWithAliases(organizationId, id);
    return { affiliate: toAffiliateDto(affiliate), aliases };
  }
}
