import type { ImportedCommissionStatus, Phase, Skip, SourceAffiliate, SourceCommission, SourceCustomer, SourcePage, SourcePayout, SourceReader } from '../import-model.js';
import { ImportSourceError } from '../import-model.js';
import { getJson, type SourceHttpOptions } from './source-http.js';
import { collect, currencyOf, dateOf, emailOf, idOf, minorUnits, text, Unmappable, type Json } from './source-rows.js';

/**
 * FirstPromoter's v2 admin API (https://docs.firstpromoter.com/api-reference-v2/api-admin/introduction):
 * - auth (https://docs.firstpromoter.com/api-reference-v2/api-admin/authentication): two
 *   credentials, `Authorization: Bearer <API key>` and `ACCOUNT-ID: <account id>`, both from
 *   Settings → Integrations → Manage API keys. (Dub's importer sends `Basic <key>`; we follow the
 *   documentation.) A wrong key answers 401, a key of another account 401/403;
 * - rate limit: 400 requests a minute per account, then 429 (the introduction page);
 * - lists under `/company/…` paged by `page` and `per_page` (Dub's importer reads them so).
 * Objects read: promoters (id, email, name, profile.first_name/last_name, status,
 * promoter_campaigns[].ref_token, default_ref_id), referrals (id, email, uid,
 * promoter_campaign.promoter), commissions (id, status pending/approved/denied, is_paid, amount
 * and sale_amount in cents, original_sale_amount, original_sale_currency, unit, referral,
 * promoter_campaign.promoter, created_at: https://docs.firstpromoter.com/api-reference-v2/api-admin/commissions/create-a-commission,
 * Dub's apps/web/lib/firstpromoter/schemas.ts), payouts (id, status, amount, currency, promoter,
 * paid_at, commissions).
 *
 * Not knowable from the documentation, decided here:
 * - the list envelope: Dub parses a bare JSON array; we accept that or `{ data: [...] }`, and read
 *   pages until one comes back empty (a short page is not proof of the end: the server may cap
 *   per_page below what we ask);
 * - the commission's own currency: `amount` is in the account's currency, which the commission
 *   does not name; we use its `currency` when present, else `original_sale_currency` (right when
 *   the account sells in one currency; say so in docs/imports.md);
 * - payouts: the status that means paid (`completed` or `paid`), their currency field, and which
 *   commissions they carry (`commissions[].id` or `commission_ids`); a commission with `is_paid`
 *   but no imported payout is imported as paid without a payout;
 * - a partner's payout e-mail (`paypal_email` at the promoter or its profile, when present);
 * - the sale's id: the commission's `event_id` / `transaction_id` when present, else
 *   `commission:<id>` (one sale per commission).
 */
export const FIRSTPROMOTER_DEFAULT_BASE_URL = 'https://api.firstpromoter.com/api/v2';
const PAGE_SIZE = 100;

const PATHS: Record<Phase, string> = {
  affiliates: '/company/promoters',
  customers: '/company/referrals',
  payouts: '/company/payouts',
  commissions: '/company/commissions',
};

export class FirstPromoterReader implements SourceReader {
  private readonly http: SourceHttpOptions;

  constructor(credentials: Record<string, string>, baseUrl: string, http: Partial<SourceHttpOptions> = {}) {
    const key = credentials.api_key;
    if (!key) throw new ImportSourceError('credentials.api_key: Required (FirstPromoter API key)');
    const account = credentials.account_id;
    if (!account) throw new ImportSourceError('credentials.account_id: Required (FirstPromoter Account ID)');
    this.http = { name: 'FirstPromoter', baseUrl, headers: { authorization: `Bearer ${key}`, 'account-id': account }, ...http };
  }

  async readPage(phase: Phase, page: number): Promise<SourcePage> {
    const path = PATHS[phase];
    const body = (await getJson(this.http, `${path}?page=${page}&per_page=${PAGE_SIZE}`)) as unknown;
    const rows = Array.isArray(body) ? (body as Json[]) : Array.isArray((body as Json)?.data) ? ((body as Json).data as Json[]) : null;
    if (!rows) throw new ImportSourceError(`FirstPromoter answered ${path} without a list`);
    const next = rows.length > 0 ? page + 1 : null;
    const skipped: Skip[] = [];
    switch (phase) {
      case 'affiliates':
        return { batch: { affiliates: collect(rows, 'affiliates', skipped, toAffiliate), skipped }, next };
      case 'customers':
        return { batch: { customers: collect(rows, 'customers', skipped, toCustomer), skipped }, next };
      case 'payouts':
        return { batch: { payouts: collect(rows, 'payouts', skipped, toPayout), skipped }, next };
      case 'commissions':
        return { batch: { commissions: collect(rows, 'commissions', skipped, toCommission), skipped }, next };
    }
  }
}

const STATES: Record<string, SourceAffiliate['status']> = { active: 'active', accepted: 'active', pending: 'pending' };

function toAffiliate(row: Json): SourceAffiliate {
  const email = emailOf(row.email);
  const name = text(row.name) ?? ([text(row.profile?.first_name), text(row.profile?.last_name)].filter(Boolean).join(' ') || null);
  const state = text(row.status) ?? text(row.state);
  const tokens: string[] = [];
  for (const t of [...(Array.isArray(row.promoter_campaigns) ? (row.promoter_campaigns as Json[]).map((c) => c?.ref_token) : []), row.default_ref_id]) {
    const token = text(t);
    if (token && !tokens.includes(token)) tokens.push(token);
  }
  return { source_id: idOf(row), email, name, status: state === null ? 'active' : (STATES[state] ?? 'disabled'), payout_email: text(row.paypal_email) ?? text(row.profile?.paypal_email), tokens };
}

function promoterOf(row: Json | null | undefined): string | null {
  return text(row?.promoter_campaign?.promoter?.id) ?? text(row?.promoter_campaign?.promoter_id) ?? text(row?.promoter?.id) ?? text(row?.promoter_id);
}

function customerFrom(referral: Json, promoter: string | null): SourceCustomer {
  const customerId = text(referral.uid) ?? text(referral.email);
  if (!customerId) throw new Unmappable('no uid or e-mail: no customer to record');
  if (!promoter) throw new Unmappable('no promoter: not attributed to a partner');
  const name = [text(referral.first_name), text(referral.last_name)].filter(Boolean).join(' ') || null;
  return { source_id: customerId, customer_id: customerId, email: text(referral.email), name, affiliate_source_id: promoter };
}

function toCustomer(row: Json): SourceCustomer {
  idOf(row);
  return customerFrom(row, promoterOf(row));
}

function toPayout(row: Json): SourcePayout {
  const status = text(row.status);
  if (status !== 'completed' && status !== 'paid') throw new Unmappable(`not paid at FirstPromoter (status ${JSON.stringify(row.status ?? null)}): its commissions come as approved, to be paid here`);
  const currency = currencyOf(row.currency);
  const promoter = promoterOf(row);
  if (!promoter) throw new Unmappable('no promoter');
  const listed = Array.isArray(row.commissions) ? (row.commissions as Json[]).map((c) => text(c?.id)) : Array.isArray(row.commission_ids) ? (row.commission_ids as unknown[]).map(text) : [];
  return {
    source_id: idOf(row),
    affiliate_source_id: promoter,
    amount: minorUnits(row.amount, currency, 'amount'),
    currency,
    paid_at: dateOf(row.paid_at ?? row.updated_at, 'paid_at'),
    commission_source_ids: listed.filter((c): c is string => c !== null),
  };
}

function statusOf(row: Json): ImportedCommissionStatus {
  if (row.status === 'denied') return 'reversed';
  if (row.status === 'approved') return row.is_paid === true ? 'paid' : 'approved';
  if (row.status === 'pending') return 'pending';
  throw new Unmappable(`unknown status ${JSON.stringify(row.status ?? null)}`);
}

function toCommission(row: Json): SourceCommission {
  const status = statusOf(row);
  if (row.unit != null && row.unit !== 'cash') throw new Unmappable(`a reward in ${JSON.stringify(row.unit)}, not money`);
  const saleCurrency = currencyOf(row.original_sale_currency ?? row.currency);
  const currency = currencyOf(row.currency ?? row.original_sale_currency);
  const promoter = promoterOf(row);
  if (!promoter) throw new Unmappable('no promoter');
  const referral = row.referral as Json | null | undefined;
  const saleId = text(row.event_id) ?? text(row.transaction_id) ?? `commission:${idOf(row)}`;
  return {
    source_id: idOf(row),
    affiliate_source_id: promoter,
    status,
    amount: minorUnits(row.amount, currency, 'amount'),
    currency,
    approves_at: null,
    approved_at: status === 'approved' || status === 'paid' ? dateOf(row.updated_at ?? row.created_at, 'updated_at') : null,
    payout_source_id: status === 'paid' ? (text(row.payout?.id) ?? text(row.payout_id)) : null,
    sale: {
      source_id: saleId,
      external_id: saleId,
      amount: minorUnits(row.original_sale_amount ?? row.sale_amount, saleCurrency, 'original_sale_amount'),
      refunded_amount: '0',
      currency: saleCurrency,
      occurred_at: dateOf(row.created_at, 'created_at'),
      customer: referral && (text(referral.uid) ?? text(referral.email)) ? customerFrom(referral, promoter) : null,
    },
  };
}
