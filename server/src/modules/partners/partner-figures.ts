import type { PartnerBalance, PartnerPoint, PartnerTotals } from '@affiliate-attribution/contract';
import type { PartnerCommission, PartnerCustomer, PartnerPayout } from '../../resources.js';
import { Decimal } from 'decimal.js';
import { BadRequestError, NotFoundError } from '../../http/errors.js';
import { decodeCursor, pageLimit, pageOf } from '../../http/pagination.js';
import { decimalToNumber, iso, isoOrNull } from '../../http/serialize.js';
import { linkOnSite, maskCustomer, nextPayout, periodStarts } from './partner-views.js';
import type { MembershipRow, PartnerKey, PartnersRepository } from './partners.repository.js';

const DAY_MS = 86_400_000;
/** The longest period a partner's stats cover. */
const MAX_STATS_DAYS = 366;

/**
 * What a signed-in partner sees of their own work, per program they belong to: their link to a
 * page, customers (masked), commissions, payouts, balances and stats over a period. Every read is
 * the partner's own (their memberships); a program they are not in is 404.
 */
export class PartnerFigures {
  /** What holds the partner's payouts per program (modules/tax-forms; the Partners module sets it): shown with their balance. */
  payoutHolds: (partner: PartnerKey) => Promise<Map<string, PartnerBalance['payout_hold']>> = async () => new Map();

  constructor(private readonly partners: PartnersRepository) {}

  /** One of the partner's memberships by program: 404 for any program they are not in (another partner's included). */
  private async membership(partner: PartnerKey, programId: string): Promise<MembershipRow> {
    const found = (await this.partners.memberships(partner)).find((m) => m.program.id === programId);
    if (!found) throw new NotFoundError('Program not found');
    return found;
  }

  /** A program filter of a query: null for all of the partner's programs, else one of theirs (404 otherwise). */
  private async programFilter(partner: PartnerKey, programId: string | undefined): Promise<string | null> {
    if (programId === undefined) return null;
    return (await this.membership(partner, programId)).program.id;
  }

  async link(partner: PartnerKey, programId: string, page: string): Promise<string> {
    const membership = await this.membership(partner, programId);
    const site = membership.program.website_url;
    if (!site) throw new BadRequestError("url: The merchant has not set the program's website yet");
    const link = linkOnSite(site, page, membership.slug);
    if (!link) throw new BadRequestError(`url: Must be a page of ${new URL(site).hostname}`);
    return link;
  }

  async customers(
    partner: PartnerKey,
    query: { program_id?: string; limit?: number; cursor?: string },
  ): Promise<{ customers: PartnerCustomer[]; next_cursor: string | null }> {
    const limit = pageLimit(query.limit);
    const rows = await this.partners.customers(
      partner,
      await this.programFilter(partner, query.program_id),
      decodeCursor(query.cursor),
      limit + 1,
    );
    const page = pageOf(rows, limit, (r) => ({ at: r.created_at, id: r.id }));
    return {
      customers: page.items.map((r) => ({
        customer: maskCustomer(partner.organizationId, r.customer_id),
        program_id: r.program_id,
        status: r.status as PartnerCustomer['status'],
        signed_up_at: iso(r.created_at),
        first_conversion_at: isoOrNull(r.first_conversion_at),
      })),
      next_cursor: page.next_cursor,
    };
  }

  async commissions(
    partner: PartnerKey,
    query: { program_id?: string; limit?: number; cursor?: string },
  ): Promise<{ commissions: PartnerCommission[]; next_cursor: string | null }> {
    const limit = pageLimit(query.limit);
    const rows = await this.partners.commissions(
      partner,
      await this.programFilter(partner, query.program_id),
      decodeCursor(query.cursor),
      limit + 1,
    );
    const page = pageOf(rows, limit, (r) => ({ at: r.created_at, id: r.id }));
    return {
      commissions: page.items.map((r) => ({
        id: r.id,
        program_id: r.program_id,
        type: r.type as PartnerCommission['type'],
        status: r.status as PartnerCommission['status'],
        amount: decimalToNumber(r.amount),
        currency: r.currency,
        customer: r.customer_id === null ? null : maskCustomer(partner.organizationId, r.customer_id),
        approves_at: r.status === 'pending' ? isoOrNull(r.approves_at) : null,
        created_at: iso(r.created_at),
      })),
      next_cursor: page.next_cursor,
    };
  }

  async payouts(
    partner: PartnerKey,
    query: { program_id?: string; limit?: number; cursor?: string },
  ): Promise<{ payouts: PartnerPayout[]; balances: PartnerBalance[]; next_cursor: string | null }> {
    const limit = pageLimit(query.limit);
    const programId = await this.programFilter(partner, query.program_id);
    const rows = await this.partners.payouts(partner, programId, decodeCursor(query.cursor), limit + 1);
    const page = pageOf(rows, limit, (r) => ({ at: r.created_at, id: r.id }));
    return {
      payouts: page.items.map((r) => ({
        id: r.id,
        program_id: r.program_id,
        amount: decimalToNumber(r.amount),
        currency: r.currency,
        status: r.status as PartnerPayout['status'],
        failure_reason: r.failure_reason ?? null,
        retried_by_payout_id: r.retried_by_payout_id ?? null,
        commission_count: r.commission_count,
        created_at: iso(r.created_at),
        paid_at: isoOrNull(r.paid_at),
      })),
      balances: query.cursor === undefined ? await this.balances(partner, programId) : [],
      next_cursor: page.next_cursor,
    };
  }

  private async balances(partner: PartnerKey, programId: string | null): Promise<PartnerBalance[]> {
    const memberships = await this.partners.memberships(partner);
    const { totals, pending } = await this.partners.balances(partner, programId);
    const holds = await this.payoutHolds(partner);
    return totals.map((t) => {
      const program = memberships.find((m) => m.program.id === t.program_id)!.program;
      // The minimum is in the program's currency; other currencies are paid at any positive net (spec: Payouts).
      const minimum = t.currency === program.currency ? new Decimal(program.minimum_payout) : new Decimal(0);
      const next = nextPayout(
        new Decimal(t.approved),
        minimum,
        pending
          .filter((p) => p.program_id === t.program_id && p.currency === t.currency)
          .map((p) => ({ amount: new Decimal(p.amount), approves_at: p.approves_at })),
      );
      return {
        program_id: t.program_id,
        currency: t.currency,
        pending: decimalToNumber(t.pending),
        on_hold: decimalToNumber(t.on_hold),
        approved: decimalToNumber(t.approved),
        in_payout: decimalToNumber(t.in_payout),
        paid: decimalToNumber(t.paid),
        minimum_payout: minimum.toNumber(),
        next_payout: {
          state: next.state,
          eligible: next.eligible,
          eligible_from: isoOrNull(next.eligible_from),
          shortfall: next.shortfall.toNumber(),
        },
        payout_hold: holds.get(t.program_id) ?? null,
      };
    });
  }

  async stats(
    partner: PartnerKey,
    query: { program_id?: string; from: string; to: string; interval?: 'day' | 'week' | 'month' },
  ): Promise<{ interval: 'day' | 'week' | 'month'; points: PartnerPoint[]; totals: PartnerTotals }> {
    const from = new Date(query.from);
    const to = new Date(query.to);
    if (!(to > from)) throw new BadRequestError('to: Must be after from');
    if (to.getTime() - from.getTime() > MAX_STATS_DAYS * DAY_MS)
      throw new BadRequestError(`to: At most ${MAX_STATS_DAYS} days after from`);
    const interval = query.interval ?? 'day';
    const activity = await this.partners.activity(
      partner,
      await this.programFilter(partner, query.program_id),
      from,
      to,
      interval,
    );
    const points = new Map<number, PartnerPoint>(
      periodStarts(from, to, interval).map((at) => [
        at.getTime(),
        { period: iso(at), clicks: 0, signups: 0, conversions: 0, earnings: [] },
      ]),
    );
    const at = (d: Date) => points.get(new Date(d).getTime());
    for (const r of activity.clicks) at(r.period)!.clicks = Number(r.n);
    for (const r of activity.signups) at(r.period)!.signups = Number(r.n);
    for (const r of activity.conversions) at(r.period)!.conversions = Number(r.n);
    const earned = new Map<string, Decimal>();
    const onHold = new Map<string, Decimal>();
    const add = (into: Map<string, Decimal>, currency: string, amount: string) =>
      into.set(currency, (into.get(currency) ?? new Decimal(0)).plus(amount));
    for (const r of activity.earnings) {
      at(r.period)!.earnings.push({ currency: r.currency, amount: decimalToNumber(r.earned) });
      add(earned, r.currency, r.earned);
      if (!new Decimal(r.on_hold).isZero()) add(onHold, r.currency, r.on_hold);
    }
    const amounts = (m: Map<string, Decimal>) =>
      [...m]
        .sort(([a], [b]) => a.localeCompare(b))
        .map(([currency, amount]) => ({ currency, amount: amount.toNumber() }));
    const count = (rows: { n: string }[]) => rows.reduce((n, r) => n + Number(r.n), 0);
    return {
      interval,
      points: [...points.values()],
      totals: {
        clicks: count(activity.clicks),
        signups: count(activity.signups),
        conversions: count(activity.conversions),
        earned: amounts(earned),
        on_hold: amounts(onHold),
      },
    };
  }
}
