import type {
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
import {
  collect,
  currencyOf,
  date,
  dateOrNull,
  email,
  major,
  required,
  text,
  Unmappable,
  type Json,
} from './row-mapping.js';
import { getJson, type SourceHttpOptions } from './source-http.js';

/**
 * Tapfiliate's REST API 1.6 (https://tapfiliate.com/docs/rest/, base https://api.tapfiliate.com/1.6):
 * the account's API key in an `X-Api-Key` header (summarised from those docs at
 * https://raw.githubusercontent.com/api-evangelist/tapfiliate/refs/heads/main/conventions/tapfiliate-conventions.yml;
 * Dub's importer, dubinc/dub apps/web/lib/tapfiliate/api.ts, sends the same); lists answer a bare JSON array, paged
 * by `page` (1-based, 25 a page) with the next page in a `Link: <…?page=2>; rel="next"` header
 * (#header-pagination); amounts are JSON numbers in the currency's major unit. Objects read:
 * - affiliates (GET /affiliates/): id, email, firstname, lastname, referral_link (its `ref`
 *   parameter is the referral code), approved;
 * - customers (GET /customers/): id, customer_id (the merchant's), affiliate { id };
 * - payments (GET /payments/): id, affiliate { id }, amount, currency, created_at, commissions[];
 * - conversions (GET /conversions/): id, external_id, amount, currency, created_at, affiliate { id },
 *   customer { customer_id }, commissions[] { id, amount, currency, approved (true, false, null) }.
 *
 * Not knowable from the documentation, decided here (docs/imports.md says the same):
 * - a commission names no payment: one is `paid` when a payment lists it in `commissions[]`, else
 *   `approved` is true -> approved, null -> pending, false (disapproved) -> reversed;
 * - a payment that lists no commissions is skipped (nothing to tie it to);
 * - payout methods are a per-affiliate request with provider-specific fields: no payout e-mail;
 * - rate limits are signalled (X-Ratelimit-*) but not quantified: a 429 is waited out;
 * - a conversion without `currency` takes its commission's.
 *
 * Campaign terms (import-terms.ts): the programs (GET /programs/: id, title, currency, cookie_time
 * in days, recurring_commissions) and each program's commission types
 * (GET /programs/{program_id}/commission-types/: id, name, type `percentage` or `fixed`,
 * percentage, amount in the program's currency's major unit), as the REST reference lists them
 * (https://tapfiliate.com/docs/rest/#programs; field names from the Programs section of the
 * OpenAPI derived from it, api-evangelist/tapfiliate openapi/tapfiliate-programs-api-openapi.yml).
 * Each commission type of each program is one "campaign": its rate, the program's cookie time (our
 * click window) and, when `recurring_commissions` is false, one paid conversion per customer (a
 * renewal earns nothing there). Minimum payout, hold period and the length of recurring
 * commissions are not in the API: left out, not compared.
 */
export const TAPFILIATE_DEFAULT_BASE_URL = 'https://api.tapfiliate.com/1.6';

const PATHS: Record<Phase, string> = {
  affiliates: '/affiliates/',
  customers: '/customers/',
  payouts: '/payments/',
  commissions: '/conversions/',
};

export class TapfiliateReader implements SourceReader {
  private readonly http: SourceHttpOptions;
  /** Commission id -> payment id, from the payments (read again when a resumed import needs it). */
  private paidBy: Map<string, string> | null = null;

  constructor(credentials: Record<string, string>, baseUrl: string, http: Partial<SourceHttpOptions> = {}) {
    const key = credentials.api_key;
    if (!key) throw new ImportSourceError('credentials.api_key: Required (Tapfiliate API key)');
    this.http = { name: 'Tapfiliate', baseUrl, credentialName: 'API key', headers: { 'x-api-key': key }, ...http };
  }

  async readTerms(): Promise<SourceTerms[]> {
    const out: SourceTerms[] = [];
    for (let page: number | null = 1; page !== null;) {
      const read = await this.list('/programs/', page);
      for (const program of read.rows) {
        const id = text(program?.id);
        if (!id) throw new ImportSourceError('Tapfiliate answered /programs/ with a program without an id');
        const path = `/programs/${encodeURIComponent(id)}/commission-types/`;
        const { body } = await getJsonWithLink(this.http, path);
        if (!Array.isArray(body)) throw new ImportSourceError(`Tapfiliate answered ${path} without a list`);
        for (const type of body as Json[]) out.push(commissionTypeTerms(program, type, body.length));
      }
      page = read.next;
    }
    return out;
  }

  async readPage(phase: Phase, page: number): Promise<SourcePage> {
    const { rows, next } = await this.list(PATHS[phase], page);
    const skipped: Skip[] = [];
    switch (phase) {
      case 'affiliates':
        return { batch: { affiliates: collect(rows, 'affiliates', skipped, toAffiliate), skipped }, next };
      case 'customers':
        return { batch: { customers: collect(rows, 'customers', skipped, toCustomer), skipped }, next };
      case 'payouts': {
        const payouts = collect(rows, 'payouts', skipped, toPayout);
        this.paidBy ??= new Map();
        for (const p of payouts) for (const c of p.commission_source_ids) this.paidBy.set(c, p.source_id);
        return { batch: { payouts, skipped }, next };
      }
      case 'commissions': {
        const paidBy = await this.payments();
        return {
          batch: { commissions: collect(rows, 'commissions', skipped, (row) => toCommissions(row, paidBy)), skipped },
          next,
        };
      }
    }
  }

  private async payments(): Promise<Map<string, string>> {
    if (this.paidBy) return this.paidBy;
    const paidBy = new Map<string, string>();
    for (let page: number | null = 1; page !== null;) {
      const read = await this.list(PATHS.payouts, page);
      for (const p of collect(read.rows, 'payouts', [], toPayout))
        for (const c of p.commission_source_ids) paidBy.set(c, p.source_id);
      page = read.next;
    }
    return (this.paidBy = paidBy);
  }

  private async list(path: string, page: number): Promise<{ rows: Json[]; next: number | null }> {
    const { body, link } = await getJsonWithLink(this.http, `${path}?page=${page}`);
    if (!Array.isArray(body)) throw new ImportSourceError(`Tapfiliate answered ${path} without a list`);
    return { rows: body as Json[], next: nextPage(link, page) };
  }
}

/** The page number of the `rel="next"` target of a Link header (RFC 8288), or null on the last page. */
export function nextPage(link: string | null, current: number): number | null {
  if (!link) return null;
  for (const part of link.split(',')) {
    const match = /<([^>]*)>\s*;(.*)$/.exec(part.trim());
    if (!match || !/\brel\s*=\s*"?[^"]*\bnext\b/i.test(match[2])) continue;
    const page = Number(new URL(match[1], 'http://x').searchParams.get('page'));
    return Number.isInteger(page) && page > current ? page : null;
  }
  return null;
}

/** One commission type of one program, in the program's fields (a term it does not state is left out). */
function commissionTypeTerms(program: Json, type: Json, types: number): SourceTerms {
  const terms: SourceTerms['terms'] = {};
  const code = text(program.currency)?.toUpperCase();
  const currency = code && /^[A-Z]{3}$/.test(code) ? code : null;
  if (type?.type === 'percentage' && typeof type.percentage === 'number' && type.percentage >= 0) {
    terms.commission_type = 'percent';
    terms.commission_value = String(type.percentage);
  } else if (type?.type === 'fixed' && currency && typeof type.amount === 'number' && type.amount >= 0) {
    try {
      terms.commission_value = major(type.amount, currency, 'amount');
      terms.commission_type = 'flat';
    } catch {
      // finer than the currency's minor unit: not a rate this program can hold, left out
    }
  }
  if (Number.isInteger(program.cookie_time) && program.cookie_time > 0) terms.click_window_days = program.cookie_time;
  if (program.recurring_commissions === false) terms.commission_max_conversions = 1;
  const title = text(program.title) ?? text(program.id) ?? '(no id)';
  const name = types > 1 ? `${title} (${text(type?.name) ?? text(type?.id) ?? 'commission type'})` : title;
  return {
    source_id: `${text(program.id)}/${text(type?.id) ?? ''}`,
    name,
    currency: terms.commission_type === 'flat' ? currency : null,
    terms,
  };
}

async function getJsonWithLink(http: SourceHttpOptions, path: string): Promise<{ body: unknown; link: string | null }> {
  let link: string | null = null;
  const body = await getJson({ ...http, onHeaders: (headers) => (link = headers.get('link')) }, path);
  return { body, link };
}

function toAffiliate(row: Json): SourceAffiliate {
  const id = required(row.id, 'id');
  const name = [text(row.firstname), text(row.lastname)].filter(Boolean).join(' ') || null;
  const status = row.approved === false ? 'disabled' : row.approved === null ? 'pending' : 'active';
  const links = [row.referral_link, ...(Array.isArray(row.referral_links) ? row.referral_links : [])];
  const tokens = [...new Set([text(row.referral_code), ...links.map(refOf)].filter((t): t is string => t !== null))];
  return {
    source_id: id,
    email: email(row.email),
    name,
    status,
    payout_email: null,
    tokens,
    created_at: dateOrNull(row.created_at),
  };
}

/** The referral code of a referral link, given as its URL or as `{ link }`. */
function refOf(link: unknown): string | null {
  const url = text(typeof link === 'object' && link !== null ? (link as Json).link : link);
  if (!url) return null;
  try {
    return text(new URL(url).searchParams.get('ref'));
  } catch {
    return null;
  }
}

function toCustomer(row: Json): SourceCustomer {
  required(row.id, 'id');
  const customerId = text(row.customer_id);
  if (!customerId) throw new Unmappable('no customer_id');
  const affiliate = text(row.affiliate?.id);
  if (!affiliate) throw new Unmappable('no affiliate: not referred');
  return {
    source_id: customerId,
    customer_id: customerId,
    email: text(row.email),
    name: text(row.name),
    affiliate_source_id: affiliate,
    created_at: dateOrNull(row.created_at),
  };
}

function toPayout(row: Json): SourcePayout {
  const id = required(row.id, 'id');
  const affiliate = text(row.affiliate?.id);
  if (!affiliate) throw new Unmappable('no affiliate');
  const currency = currencyOf(row.currency);
  const commissions = Array.isArray(row.commissions)
    ? (row.commissions as Json[]).map((c) => text(c?.id)).filter((c): c is string => c !== null)
    : [];
  if (commissions.length === 0) throw new Unmappable('no commissions listed: nothing to tie the payment to');
  return {
    source_id: id,
    affiliate_source_id: affiliate,
    amount: major(row.amount, currency, 'amount'),
    currency,
    paid_at: date(row.created_at, 'created_at'),
    commission_source_ids: commissions,
  };
}

/** One conversion carries its commissions: each becomes one of ours, all against the same sale. */
function toCommissions(row: Json, paidBy: Map<string, string>): SourceCommission[] {
  const id = required(row.id, 'id');
  const affiliate = text(row.affiliate?.id);
  if (!affiliate) throw new Unmappable('no affiliate');
  const commissions = Array.isArray(row.commissions) ? (row.commissions as Json[]) : [];
  if (commissions.length === 0) throw new Unmappable('no commissions');
  const customerId = text(row.customer?.customer_id);
  return commissions.map((c) => {
    const commissionId = required(c?.id, 'commissions[].id');
    const currency = currencyOf(c.currency ?? row.currency);
    const saleCurrency = currencyOf(row.currency ?? c.currency);
    const payout = paidBy.get(commissionId) ?? null;
    const status = payout ? 'paid' : c.approved === true ? 'approved' : c.approved === false ? 'reversed' : 'pending';
    return {
      source_id: commissionId,
      affiliate_source_id: affiliate,
      status,
      amount: major(c.amount, currency, `commission ${commissionId} amount`),
      currency,
      approves_at: null,
      approved_at: null,
      payout_source_id: payout,
      sale: {
        source_id: id,
        external_id: text(row.external_id) ?? id,
        amount: major(row.amount ?? 0, saleCurrency, 'amount'),
        refunded_amount: '0',
        currency: saleCurrency,
        occurred_at: date(row.created_at, 'created_at'),
        customer: customerId
          ? { source_id: customerId, customer_id: customerId, email: null, name: null, affiliate_source_id: affiliate }
          : null,
      },
    } satisfies SourceCommission;
  });
}
