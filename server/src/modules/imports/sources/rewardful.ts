import { minorUnitDigits } from '../../../attribution/money.js';
import type {
  ImportedCommissionStatus,
  Phase,
  Skip,
  SourceAffiliate,
  SourceCommission,
  SourceCustomer,
  SourcePage,
  SourcePayout,
  SourceReader,
  SourceTerms,
} from '../import-model.js';
import { ImportSourceError } from '../import-model.js';
import { getJson, type SourceHttpOptions } from './source-http.js';
import { dateOrNull } from './source-rows.js';

/**
 * Rewardful's REST API (https://developers.rewardful.com/rest-api/overview): Basic auth with the
 * API Secret as the user name and no password; lists paginated by `page` and `limit` (1 to 100),
 * answering `{ pagination: { next_page, ... }, data: [...] }`; amounts in cents of their
 * `currency`. Objects read (their documented fields):
 * - affiliates (https://developers.rewardful.com/rest-api/affiliates/object): id, email,
 *   first_name, last_name, state, paypal_email, links[].token;
 * - referrals (https://developers.rewardful.com/rest-api/referrals): id, affiliate, customer
 *   { id, email, name }, stripe_customer_id, conversion_state;
 * - payouts (https://developers.rewardful.com/rest-api/payouts/the-payout-object): id, state,
 *   amount, currency, paid_at, affiliate, commissions[] (expand);
 * - commissions (https://developers.rewardful.com/rest-api/commissions/object): id, amount,
 *   currency, state (pending, due, paid, voided), due_at, paid_at, voided_at, sale { id,
 *   sale_amount_cents, refund_amount_cents, charged_at, referral { customer, affiliate } }.
 *
 * Not knowable from the documentation, decided here: a 429's wait (the docs state no limit; we
 * honour Retry-After, else back off), the referral's affiliate field name (read from `affiliate.id`
 * or `affiliate_id`), and which of a commission's objects names its affiliate (its own
 * `affiliate`, else its sale's, else its referral's).
 */
export const REWARDFUL_DEFAULT_BASE_URL = 'https://api.getrewardful.com/v1';
const PAGE_SIZE = 100;

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- Rewardful's JSON, read field by field and checked where used
type Json = Record<string, any>;

const PATHS: Record<Phase, string> = {
  affiliates: '/affiliates',
  customers: '/referrals?expand[]=affiliate',
  payouts: '/payouts?expand[]=commissions&expand[]=affiliate',
  commissions: '/commissions?expand[]=sale&expand[]=affiliate',
};

export class RewardfulReader implements SourceReader {
  private readonly http: SourceHttpOptions;

  constructor(credentials: Record<string, string>, baseUrl: string, http: Partial<SourceHttpOptions> = {}) {
    const secret = credentials.api_secret;
    if (!secret) throw new ImportSourceError('credentials.api_secret: Required (Rewardful API Secret)');
    this.http = {
      name: 'Rewardful',
      baseUrl,
      headers: { authorization: `Basic ${Buffer.from(`${secret}:`).toString('base64')}` },
      ...http,
    };
  }

  /**
   * The campaigns' terms (https://developers.rewardful.com/rest-api/campaigns/the-campaign-object):
   * reward_type percent (commission_percent) or amount (commission_amount_cents in
   * commission_amount_currency), minimum_payout_cents (minimum_payout_currency),
   * max_commission_period_months and max_commissions (null: no limit), days_until_commissions_are_due
   * (our hold) and days_before_referrals_expire (our click window).
   */
  async readTerms(): Promise<SourceTerms[]> {
    const out: SourceTerms[] = [];
    for (let page: number | null = 1; page !== null;) {
      const body = (await getJson(this.http, `/campaigns?page=${page}&limit=${PAGE_SIZE}`)) as Json;
      if (!body || !Array.isArray(body.data))
        throw new ImportSourceError('Rewardful answered /campaigns without a data list');
      for (const row of body.data as Json[]) out.push(campaignTerms(row));
      const next: unknown = body.pagination?.next_page;
      page = typeof next === 'number' && next > page ? next : null;
    }
    return out;
  }

  async readPage(phase: Phase, page: number): Promise<SourcePage> {
    const path = PATHS[phase];
    const body = (await getJson(
      this.http,
      `${path}${path.includes('?') ? '&' : '?'}page=${page}&limit=${PAGE_SIZE}`,
    )) as Json;
    if (!body || !Array.isArray(body.data))
      throw new ImportSourceError(`Rewardful answered ${path} without a data list`);
    const next = body.pagination?.next_page;
    const rows = body.data as Json[];
    const skipped: Skip[] = [];
    const nextPage = typeof next === 'number' && next > page ? next : null;
    switch (phase) {
      case 'affiliates':
        return { batch: { affiliates: collect(rows, 'affiliates', skipped, toAffiliate), skipped }, next: nextPage };
      case 'customers':
        return { batch: { customers: collect(rows, 'customers', skipped, toCustomer), skipped }, next: nextPage };
      case 'payouts':
        return { batch: { payouts: collect(rows, 'payouts', skipped, toPayout), skipped }, next: nextPage };
      case 'commissions':
        return { batch: { commissions: collect(rows, 'commissions', skipped, toCommission), skipped }, next: nextPage };
    }
  }
}

/** A row that cannot be mapped throws a Skip; the rest of the page goes on. */
class Unmappable extends Error {}

function collect<T>(rows: Json[], kind: Skip['kind'], skipped: Skip[], map: (row: Json) => T): T[] {
  const out: T[] = [];
  for (const row of rows) {
    try {
      out.push(map(row));
    } catch (err) {
      if (!(err instanceof Unmappable)) throw err;
      skipped.push({ kind, source_id: String(row?.id ?? '(no id)'), reason: err.message });
    }
  }
  return out;
}

const text = (value: unknown): string | null =>
  typeof value === 'string' && value.trim() !== '' ? value.trim() : null;

function id(row: Json): string {
  const value = text(row?.id);
  if (!value) throw new Unmappable('no id');
  return value;
}

function toAffiliate(row: Json): SourceAffiliate {
  const email = text(row.email);
  if (!email || !/^[^\s@]+@[^\s@]+$/.test(email))
    throw new Unmappable(`no valid e-mail (${JSON.stringify(row.email ?? null)})`);
  const name = [text(row.first_name), text(row.last_name)].filter(Boolean).join(' ') || null;
  const state = text(row.state);
  // Rewardful's states: active, and the ones that stop tracking and earning (disabled, suspicious).
  const status = state === 'active' ? 'active' : state === 'pending' ? 'pending' : 'disabled';
  const tokens = Array.isArray(row.links)
    ? (row.links as Json[]).map((l) => text(l?.token)).filter((t): t is string => t !== null)
    : [];
  return {
    source_id: id(row),
    email: email.toLowerCase(),
    name,
    status,
    payout_email: text(row.paypal_email) ?? text(row.wise_email),
    tokens,
    created_at: dateOrNull(row.created_at),
  };
}

function affiliateIdOf(...candidates: unknown[]): string | null {
  for (const c of candidates) {
    if (typeof c === 'string' && c) return c;
    if (c && typeof c === 'object' && typeof (c as Json).id === 'string') return (c as Json).id;
  }
  return null;
}

function toCustomer(row: Json): SourceCustomer {
  const customer = row.customer as Json | null | undefined;
  const customerId = text(customer?.id) ?? text(row.stripe_customer_id);
  if (!customerId)
    throw new Unmappable(
      `no customer (conversion_state ${JSON.stringify(row.conversion_state ?? null)}): a visit, nothing to import`,
    );
  const affiliate = affiliateIdOf(row.affiliate, row.affiliate_id);
  if (!affiliate) throw new Unmappable('no affiliate');
  id(row);
  // Keyed by the merchant's customer id: two referrals of one customer are one customer here.
  return {
    source_id: customerId,
    customer_id: customerId,
    email: text(customer?.email),
    name: text(customer?.name),
    affiliate_source_id: affiliate,
    created_at: signedUpAt(row),
  };
}

/** A referral's signup: when it became a lead, else when it became a customer, else when it was first seen. */
const signedUpAt = (referral: Json | null | undefined): Date | null =>
  dateOrNull(referral?.became_lead_at, referral?.became_conversion_at, referral?.created_at);

/** Cents (the currency's minor unit) to exact decimal text in the major unit. */
export function fromMinorUnits(value: unknown, currency: string, field: string): string {
  if (typeof value !== 'number' || !Number.isInteger(value))
    throw new Unmappable(`${field}: not a whole number of minor units (${JSON.stringify(value ?? null)})`);
  const digits = minorUnitDigits(currency);
  const negative = value < 0;
  const abs = String(Math.abs(value)).padStart(digits + 1, '0');
  const whole = digits === 0 ? abs : `${abs.slice(0, -digits)}.${abs.slice(-digits)}`;
  return negative ? `-${whole}` : whole;
}

function currencyOf(value: unknown): string {
  const code = text(value)?.toUpperCase();
  if (!code || !/^[A-Z]{3}$/.test(code)) throw new Unmappable(`no valid currency (${JSON.stringify(value ?? null)})`);
  return code;
}

function date(value: unknown, field: string): Date {
  const at = typeof value === 'string' ? new Date(value) : undefined;
  if (!at || Number.isNaN(at.getTime()))
    throw new Unmappable(`${field}: not a date (${JSON.stringify(value ?? null)})`);
  return at;
}

function toPayout(row: Json): SourcePayout {
  if (row.state !== 'paid')
    throw new Unmappable(
      `not paid at Rewardful (state ${JSON.stringify(row.state ?? null)}): its commissions come as approved, to be paid here`,
    );
  const currency = currencyOf(row.currency);
  const affiliate = affiliateIdOf(row.affiliate, row.affiliate_id);
  if (!affiliate) throw new Unmappable('no affiliate');
  const commissions = Array.isArray(row.commissions)
    ? (row.commissions as Json[]).map((c) => text(c?.id)).filter((c): c is string => c !== null)
    : [];
  if (commissions.length === 0) throw new Unmappable('no commissions listed');
  return {
    source_id: id(row),
    affiliate_source_id: affiliate,
    amount: fromMinorUnits(row.amount, currency, 'amount'),
    currency,
    paid_at: date(row.paid_at, 'paid_at'),
    commission_source_ids: commissions,
  };
}

const STATUSES: Record<string, ImportedCommissionStatus> = {
  pending: 'pending',
  due: 'approved',
  paid: 'paid',
  voided: 'reversed',
};

/**
 * A sale's amount before refunds and what was refunded of it. Rewardful's `sale_amount_cents` is
 * what the sale is worth now: `charge_amount_cents` less `refund_amount_cents` and
 * `tax_amount_cents` (the sale object's example: charge 10000, refund 0, tax 0, sale 10000). So the
 * amount sold is `sale_amount_cents + refund_amount_cents`, of which `refund_amount_cents` was
 * refunded: the refund is counted once, and the net is `sale_amount_cents`.
 */
function saleAmounts(sale: Json, currency: string): { amount: string; refunded_amount: string } {
  const whole = (value: unknown, field: string): number => {
    if (typeof value !== 'number' || !Number.isInteger(value))
      throw new Unmappable(`${field}: not a whole number of minor units (${JSON.stringify(value ?? null)})`);
    return value;
  };
  const refunded = whole(sale.refund_amount_cents ?? 0, 'sale.refund_amount_cents');
  if (refunded < 0) throw new Unmappable(`sale.refund_amount_cents: ${refunded} is below 0`);
  const sold =
    sale.sale_amount_cents != null
      ? whole(sale.sale_amount_cents, 'sale.sale_amount_cents') + refunded
      : whole(sale.charge_amount_cents, 'sale.charge_amount_cents') -
        whole(sale.tax_amount_cents ?? 0, 'sale.tax_amount_cents');
  return {
    amount: fromMinorUnits(sold, currency, 'sale.sale_amount_cents'),
    refunded_amount: fromMinorUnits(Math.min(refunded, Math.max(sold, 0)), currency, 'sale.refund_amount_cents'),
  };
}

function toCommission(row: Json): SourceCommission {
  const status = STATUSES[String(row.state)];
  if (!status) throw new Unmappable(`unknown state ${JSON.stringify(row.state ?? null)}`);
  const sale = row.sale as Json | null | undefined;
  if (!sale || !text(sale.id)) throw new Unmappable('no sale: nothing to record it against');
  const currency = currencyOf(row.currency ?? sale.currency);
  const saleCurrency = currencyOf(sale.currency ?? row.currency);
  const referral = sale.referral as Json | null | undefined;
  const affiliate = affiliateIdOf(
    row.affiliate,
    row.affiliate_id,
    sale.affiliate,
    sale.affiliate_id,
    referral?.affiliate,
    referral?.affiliate_id,
  );
  if (!affiliate) throw new Unmappable('no affiliate');
  const customerObject = (referral?.customer ?? sale.customer) as Json | null | undefined;
  const customerId = text(customerObject?.id) ?? text(referral?.stripe_customer_id);
  const dueAt = row.due_at ? date(row.due_at, 'due_at') : null;
  return {
    source_id: id(row),
    affiliate_source_id: affiliate,
    status,
    amount: fromMinorUnits(row.amount, currency, 'amount'),
    currency,
    approves_at: status === 'pending' ? dueAt : null,
    approved_at:
      status === 'approved' || status === 'paid'
        ? (dueAt ?? (row.paid_at ? date(row.paid_at, 'paid_at') : null))
        : null,
    payout_source_id: affiliateIdOf(row.payout, row.payout_id),
    sale: {
      source_id: id(sale),
      external_id: id(sale),
      ...saleAmounts(sale, saleCurrency),
      currency: saleCurrency,
      occurred_at: date(sale.charged_at ?? sale.invoiced_at ?? sale.created_at, 'sale.charged_at'),
      customer: customerId
        ? {
            source_id: customerId,
            customer_id: customerId,
            email: text(customerObject?.email),
            name: text(customerObject?.name),
            affiliate_source_id: affiliate,
            created_at: signedUpAt(referral),
          }
        : null,
    },
    created_at: dateOrNull(row.created_at),
  };
}

const wholeOrNull = (value: unknown): number | null | undefined =>
  value === null ? null : typeof value === 'number' && Number.isInteger(value) && value >= 0 ? value : undefined;

function campaignTerms(row: Json): SourceTerms {
  const terms: SourceTerms['terms'] = {};
  let currency: string | null = null;
  const moneyCurrency = (value: unknown) => {
    const code = text(value)?.toUpperCase();
    if (code && /^[A-Z]{3}$/.test(code)) currency ??= code;
    return code && /^[A-Z]{3}$/.test(code) ? code : null;
  };
  if (row.reward_type === 'percent' && typeof row.commission_percent === 'number') {
    terms.commission_type = 'percent';
    terms.commission_value = String(row.commission_percent);
  } else if (row.reward_type === 'amount' && Number.isInteger(row.commission_amount_cents)) {
    const code = moneyCurrency(row.commission_amount_currency);
    if (code) {
      terms.commission_type = 'flat';
      terms.commission_value = fromMinorUnits(row.commission_amount_cents, code, 'commission_amount_cents');
    }
  }
  if (Number.isInteger(row.minimum_payout_cents)) {
    const code = moneyCurrency(row.minimum_payout_currency);
    if (code) terms.minimum_payout = fromMinorUnits(row.minimum_payout_cents, code, 'minimum_payout_cents');
  }
  const period = wholeOrNull(row.max_commission_period_months);
  if (period !== undefined) terms.commission_window_months = period;
  const cap = wholeOrNull(row.max_commissions);
  if (cap !== undefined) terms.commission_max_conversions = cap;
  const due = wholeOrNull(row.days_until_commissions_are_due);
  if (typeof due === 'number') terms.hold_days = due;
  const expire = wholeOrNull(row.days_before_referrals_expire);
  if (typeof expire === 'number') terms.click_window_days = expire;
  return { source_id: String(row.id ?? '(no id)'), name: text(row.name), currency, terms };
}
