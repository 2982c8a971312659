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
import {
  collect,
  currencyOf,
  dateOf,
  dateOrNull,
  emailOf,
  idOf,
  minorUnits,
  text,
  Unmappable,
  type Json,
} from './source-rows.js';

/**
 * FirstPromoter's v2 admin API (https://docs.firstpromoter.com/api-reference-v2/api-admin/introduction):
 * - auth (https://docs.firstpromoter.com/api-reference-v2/api-admin/authentication): two
 *   credentials, `Authorization: Bearer <API key>` and `ACCOUNT-ID: <account id>`, both from
 *   Settings → Integrations → Manage API keys. (Dub's importer, apps/web/lib/firstpromoter/api.ts,
 *   sends `Basic <key>`; we follow the documentation.) A wrong key answers 401;
 * - rate limit: 400 requests a minute per account, then 429 (the introduction page);
 * - lists under `/company/…` paged by `page` and `per_page` (default 20, max 100), response
 *   envelope not documented (api-evangelist/firstpromoter conventions/firstpromoter-conventions.yml,
 *   derived from FirstPromoter's published OpenAPI documents); amounts in cents (same source);
 * - objects: promoters (id, email, name, profile, status pending/active/rejected/blocked/archived,
 *   default_ref_id, promoter_campaigns[].ref_token and state), referrals (id, email, uid,
 *   promoter_id), commissions (id, status pending/approved/denied, is_paid, amount, sale_amount,
 *   original_sale_amount, original_sale_currency, unit cash/credits/points/free_months/…,
 *   referral { email, uid }, created_at: Dub's apps/web/lib/firstpromoter/schemas.ts and
 *   https://docs.firstpromoter.com/api-reference-v2/api-admin/commissions/create-a-commission),
 *   payouts (id, status pending/processing/completed/failed, amount, unit, date_paid, promoter:
 *   https://docs.firstpromoter.com/api-reference-v1/payouts-api/create and
 *   https://docs.firstpromoter.com/api-reference-v2/api-admin/payouts/get-payout-stats).
 *
 * Not knowable from the documentation, decided here:
 * - the list envelope: Dub parses a bare JSON array; we accept that or `{ data: [...] }`, and read
 *   pages until one comes back empty (a short page is not proof of the end: the server may cap
 *   per_page below what we ask);
 * - the currency of commissions and payouts: `amount` is in the account's currency, which neither
 *   object names. We use the row's `currency` when present, else `credentials.currency` (the
 *   account's currency, optional), else for a commission its `original_sale_currency` (right when
 *   the account sells in its own currency); a payout with no currency at all is skipped, saying so;
 * - which commissions a payout carries (`commissions[].id` or `commission_ids`, when present); a
 *   commission `is_paid` whose payout is not known is imported as paid without a payout;
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
  private readonly accountCurrency: string | null;

  constructor(credentials: Record<string, string>, baseUrl: string, http: Partial<SourceHttpOptions> = {}) {
    const key = credentials.api_key;
    if (!key) throw new ImportSourceError('credentials.api_key: Required (FirstPromoter API key)');
    const account = credentials.account_id;
    if (!account) throw new ImportSourceError('credentials.account_id: Required (FirstPromoter Account ID)');
    const currency = credentials.currency?.trim().toUpperCase();
    if (currency !== undefined && !/^[A-Z]{3}$/.test(currency))
      throw new ImportSourceError(
        "credentials.currency: must be a three-letter ISO 4217 code (the FirstPromoter account's currency)",
      );
    this.accountCurrency = currency ?? null;
    this.http = {
      name: 'FirstPromoter',
      baseUrl,
      credentialName: 'API key and Account ID',
      headers: { authorization: `Bearer ${key}`, 'account-id': account },
      ...http,
    };
  }

  /**
   * The campaigns' terms. GET /company/campaigns (FirstPromoter's Campaigns OpenAPI, stored at
   * api-evangelist/firstpromoter openapi/_original/firstpromoter-v2-campaigns-openapi.yml):
   * visitor_cookie_life in days (our click window) and rewards_for_promoters[] { apply_on,
   * reward_id }; GET /company/rewards?scope=promoters
   * (https://docs.firstpromoter.com/api-reference-v2/api-advanced/rewards/get-rewards):
   * promoter_reward_type, duration once / forever / repeating with duration_in_months, schemas[]
   * { unit, amount, flat_amount, rules }. Both answer a JSON array, unpaged. A campaign's rate is
   * read when it has exactly one `sale` reward applying to all products with one unconditional
   * cash percentage schema. Not read (only the click window is compared then): a flat cash amount
   * (neither its unit, cents or major, nor its currency is documented) and tiered, conditional or
   * product-specific rewards. Minimum payout and hold period are not in the admin API.
   */
  async readTerms(): Promise<SourceTerms[]> {
    const campaigns = listOf(await getJson(this.http, '/company/campaigns'), '/company/campaigns');
    const rewards = listOf(await getJson(this.http, '/company/rewards?scope=promoters'), '/company/rewards');
    const byId = new Map(rewards.map((r) => [text(r?.id), r]));
    return campaigns.map((campaign) => campaignTerms(campaign, byId));
  }

  async readPage(phase: Phase, page: number): Promise<SourcePage> {
    const path = PATHS[phase];
    const body = await getJson(this.http, `${path}?page=${page}&per_page=${PAGE_SIZE}`);
    const rows = Array.isArray(body)
      ? (body as Json[])
      : Array.isArray((body as Json)?.data)
        ? ((body as Json).data as Json[])
        : null;
    if (!rows) throw new ImportSourceError(`FirstPromoter answered ${path} without a list`);
    const next = rows.length > 0 ? page + 1 : null;
    const skipped: Skip[] = [];
    switch (phase) {
      case 'affiliates':
        return { batch: { affiliates: collect(rows, 'affiliates', skipped, toAffiliate), skipped }, next };
      case 'customers':
        return { batch: { customers: collect(rows, 'customers', skipped, toCustomer), skipped }, next };
      case 'payouts':
        return {
          batch: { payouts: collect(rows, 'payouts', skipped, (row) => toPayout(row, this.accountCurrency)), skipped },
          next,
        };
      case 'commissions':
        return {
          batch: {
            commissions: collect(rows, 'commissions', skipped, (row) => toCommission(row, this.accountCurrency)),
            skipped,
          },
          next,
        };
    }
  }
}

function listOf(body: unknown, path: string): Json[] {
  const rows = Array.isArray(body) ? body : Array.isArray((body as Json)?.data) ? (body as Json).data : null;
  if (!rows) throw new ImportSourceError(`FirstPromoter answered ${path} without a list`);
  return rows as Json[];
}

function campaignTerms(campaign: Json, rewards: Map<string | null, Json>): SourceTerms {
  const terms: SourceTerms['terms'] = {};
  if (Number.isInteger(campaign?.visitor_cookie_life) && campaign.visitor_cookie_life > 0)
    terms.click_window_days = campaign.visitor_cookie_life;
  const given = Array.isArray(campaign?.rewards_for_promoters) ? (campaign.rewards_for_promoters as Json[]) : [];
  const sale = given
    .map((entry) => ({ entry, reward: rewards.get(text(entry?.reward_id)) ?? entry?.reward }))
    .filter(({ reward }) => reward?.promoter_reward_type === 'sale');
  const schemas: Json[] = sale.length === 1 && Array.isArray(sale[0].reward.schemas) ? sale[0].reward.schemas : [];
  const schema = schemas.length === 1 ? schemas[0] : null;
  const appliesToAll = sale.length === 1 && [undefined, null, 'all'].includes(sale[0].entry.apply_on);
  if (
    appliesToAll &&
    schema?.unit === 'cash' &&
    schema.flat_amount === false &&
    typeof schema.amount === 'number' &&
    schema.amount >= 0 &&
    !(Array.isArray(schema.rules) && schema.rules.length > 0)
  ) {
    terms.commission_type = 'percent';
    terms.commission_value = String(schema.amount);
    const reward = sale[0].reward;
    if (reward.duration === 'once') {
      terms.commission_window_months = null;
      terms.commission_max_conversions = 1;
    } else if (reward.duration === 'forever') {
      terms.commission_window_months = null;
      terms.commission_max_conversions = null;
    } else if (
      reward.duration === 'repeating' &&
      Number.isInteger(reward.duration_in_months) &&
      reward.duration_in_months > 0
    ) {
      terms.commission_window_months = reward.duration_in_months;
      terms.commission_max_conversions = null;
    }
  }
  return { source_id: text(campaign?.id) ?? '(no id)', name: text(campaign?.name), currency: null, terms };
}

const STATES: Record<string, SourceAffiliate['status']> = { active: 'active', accepted: 'active', pending: 'pending' };

function toAffiliate(row: Json): SourceAffiliate {
  const email = emailOf(row.email);
  const name =
    text(row.name) ?? ([text(row.profile?.first_name), text(row.profile?.last_name)].filter(Boolean).join(' ') || null);
  const state = text(row.status) ?? text(row.state);
  const tokens: string[] = [];
  for (const t of [
    ...(Array.isArray(row.promoter_campaigns) ? (row.promoter_campaigns as Json[]).map((c) => c?.ref_token) : []),
    row.default_ref_id,
  ]) {
    const token = text(t);
    if (token && !tokens.includes(token)) tokens.push(token);
  }
  return {
    source_id: idOf(row),
    email,
    name,
    status: state === null ? 'active' : (STATES[state] ?? 'disabled'),
    payout_email: text(row.paypal_email) ?? text(row.profile?.paypal_email),
    tokens,
    created_at: dateOrNull(row.joined_at, row.created_at),
  };
}

function promoterOf(row: Json | null | undefined): string | null {
  return (
    text(row?.promoter_campaign?.promoter?.id) ??
    text(row?.promoter_campaign?.promoter_id) ??
    text(row?.promoter?.id) ??
    text(row?.promoter_id)
  );
}

function customerFrom(referral: Json, promoter: string | null): SourceCustomer {
  const customerId = text(referral.uid) ?? text(referral.email);
  if (!customerId) throw new Unmappable('no uid or e-mail: no customer to record');
  if (!promoter) throw new Unmappable('no promoter: not attributed to a partner');
  const name = [text(referral.first_name), text(referral.last_name)].filter(Boolean).join(' ') || null;
  return {
    source_id: customerId,
    customer_id: customerId,
    email: text(referral.email),
    name,
    affiliate_source_id: promoter,
    created_at: dateOrNull(referral.created_at),
  };
}

function toCustomer(row: Json): SourceCustomer {
  idOf(row);
  return customerFrom(row, promoterOf(row));
}

function toPayout(row: Json, accountCurrency: string | null): SourcePayout {
  const status = text(row.status);
  if (status !== 'completed' && status !== 'paid')
    throw new Unmappable(
      `not paid at FirstPromoter (status ${JSON.stringify(row.status ?? null)}): its commissions come as approved, to be paid here`,
    );
  if (row.unit != null && row.unit !== 'cash')
    throw new Unmappable(`a payout in ${JSON.stringify(row.unit)}, not money`);
  if (row.currency == null && !accountCurrency)
    throw new Unmappable(
      "FirstPromoter does not say which currency the payout is in: give credentials.currency (the account's currency)",
    );
  const currency = currencyOf(row.currency ?? accountCurrency);
  const promoter = promoterOf(row);
  if (!promoter) throw new Unmappable('no promoter');
  const listed = Array.isArray(row.commissions)
    ? (row.commissions as Json[]).map((c) => text(c?.id))
    : Array.isArray(row.commission_ids)
      ? (row.commission_ids as unknown[]).map(text)
      : [];
  return {
    source_id: idOf(row),
    affiliate_source_id: promoter,
    amount: minorUnits(row.amount, currency, 'amount'),
    currency,
    paid_at: dateOf(row.date_paid ?? row.paid_at ?? row.updated_at, 'date_paid'),
    commission_source_ids: listed.filter((c): c is string => c !== null),
  };
}

function statusOf(row: Json): ImportedCommissionStatus {
  if (row.status === 'denied') return 'reversed';
  if (row.status === 'approved') return row.is_paid === true ? 'paid' : 'approved';
  if (row.status === 'pending') return 'pending';
  throw new Unmappable(`unknown status ${JSON.stringify(row.status ?? null)}`);
}

function toCommission(row: Json, accountCurrency: string | null): SourceCommission {
  const status = statusOf(row);
  if (row.unit != null && row.unit !== 'cash')
    throw new Unmappable(`a reward in ${JSON.stringify(row.unit)}, not money`);
  const saleCurrency = currencyOf(row.original_sale_currency ?? row.currency);
  const currency = currencyOf(row.currency ?? accountCurrency ?? row.original_sale_currency);
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
    approved_at:
      status === 'approved' || status === 'paid' ? dateOf(row.updated_at ?? row.created_at, 'updated_at') : null,
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
