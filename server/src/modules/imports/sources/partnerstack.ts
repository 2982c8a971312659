import type {
  ImportedCommissionStatus,
  Phase,
  Skip,
  SourceAffiliate,
  SourceCommission,
  SourceCustomer,
  SourcePage,
  SourceReader,
} from '../import-model.js';
import { ImportSourceError } from '../import-model.js';
import {
  collect,
  currencyOf,
  date,
  dateOrNull,
  email,
  minor,
  required,
  text,
  Unmappable,
  type Json,
} from './row-mapping.js';
import { getJson, type SourceHttpOptions } from './source-http.js';

/**
 * PartnerStack's vendor API v2 (https://docs.partnerstack.com/reference, base
 * https://api.partnerstack.com/api/v2, as listed at
 * https://raw.githubusercontent.com/api-evangelist/partnerstack/refs/heads/main/apis.yml).
 * Auth: HTTP Basic with the public key as user name and the secret key as password (the keys under
 * Settings -> Integrations -> PartnerStack API Keys: https://posthog.com/docs/data-pipelines/sources/partnerstack;
 * Dub's importer, dubinc/dub apps/web/lib/partnerstack/api.ts, sends the same); the reference's
 * OpenAPI also lists a Bearer scheme, accepted here as `access_token`. Lists are cursor-paginated:
 * `limit` (1-250), `starting_after=<key of the last item>`, with `has_more`; Dub reads the items at
 * `data.items`, the OpenAPI summary puts `data` (a list) and `has_more` at the top: both are read.
 * Objects read (the fields Dub's apps/web/lib/partnerstack/schemas.ts and the reference show):
 * - partnerships (GET /partnerships): key, email, first_name, last_name, partner_key (the
 *   partner's referral key), approved_status, archived;
 * - customers (GET /customers): key, customer_key, provider_key, email, name, partnership_key;
 * - rewards (GET /rewards): key, amount (cents of `currency`), currency, created_at (ms),
 *   reward_status (hold, pending, approved, scheduled, declined, paid), partnership { key },
 *   customer { key, customer_key, external_key, email }, transaction { key, amount (cents),
 *   currency, created_at }.
 *
 * Not knowable from the documentation, decided here (docs/imports.md says the same):
 * - the partnership's `partner_key`, `approved_status` and `archived` are read when present (the
 *   stored schemas do not show them): without them a partner is active and gets a generated slug;
 * - v2 documents no list of payouts for a vendor: paid rewards come as `paid`, with no payout;
 * - no payout e-mail on a partnership: left empty;
 * - extra links a partner made (GET /links/partnership/{key}) are not read, only `partner_key`;
 * - no rate limit is published: a 429 is waited out (Retry-After, else a growing pause);
 * - a reward's refunds are not described: refunded_amount is 0, a declined reward is reversed.
 */
export const PARTNERSTACK_DEFAULT_BASE_URL = 'https://api.partnerstack.com/api/v2';
const PAGE_SIZE = 100;

const PATHS: Record<Exclude<Phase, 'payouts'>, string> = {
  affiliates: '/partnerships',
  customers: '/customers',
  commissions: '/rewards',
};

const STATUSES: Record<string, ImportedCommissionStatus> = {
  hold: 'pending',
  pending: 'pending',
  approved: 'approved',
  scheduled: 'approved',
  paid: 'paid',
  declined: 'reversed',
};

export class PartnerStackReader implements SourceReader {
  private readonly http: SourceHttpOptions;
  /** The `starting_after` cursor of each page number read so far (the runner counts pages). */
  private readonly cursors = new Map<string, string | null>();

  constructor(credentials: Record<string, string>, baseUrl: string, http: Partial<SourceHttpOptions> = {}) {
    const token = credentials.access_token;
    const { public_key: publicKey, secret_key: secretKey } = credentials;
    let authorization: string;
    if (token) authorization = `Bearer ${token}`;
    else if (publicKey && secretKey)
      authorization = `Basic ${Buffer.from(`${publicKey}:${secretKey}`).toString('base64')}`;
    else
      throw new ImportSourceError(
        'credentials.public_key and credentials.secret_key: Required (PartnerStack API keys; or credentials.access_token)',
      );
    this.http = {
      name: 'PartnerStack',
      baseUrl,
      credentialName: token ? 'access token' : 'public and secret keys',
      headers: { authorization },
      ...http,
    };
  }

  async readPage(phase: Phase, page: number): Promise<SourcePage> {
    if (phase === 'payouts') return { batch: { payouts: [] }, next: null };
    const path = PATHS[phase];
    const { items, hasMore } = await this.list(path, await this.cursorFor(path, page));
    const last = items.length > 0 ? text(items[items.length - 1]?.key) : null;
    const next = hasMore && last ? page + 1 : null;
    if (next) this.cursors.set(`${path}#${next}`, last);
    const skipped: Skip[] = [];
    const byKey = (row: Json) => row?.key;
    switch (phase) {
      case 'affiliates':
        return { batch: { affiliates: collect(items, 'affiliates', skipped, toAffiliate, byKey), skipped }, next };
      case 'customers':
        return { batch: { customers: collect(items, 'customers', skipped, toCustomer, byKey), skipped }, next };
      case 'commissions':
        return { batch: { commissions: collect(items, 'commissions', skipped, toCommission, byKey), skipped }, next };
    }
  }

  /**
   * A page's cursor. A resumed import asks for page N with no cursor in memory: the list is walked
   * again from its start to find it (reading, not writing: the pages before were committed).
   */
  private async cursorFor(path: string, page: number): Promise<string | null> {
    if (page <= 1) return null;
    const known = this.cursors.get(`${path}#${page}`);
    if (known !== undefined) return known;
    let cursor: string | null = null;
    for (let p = 1; p < page; p++) {
      const { items, hasMore } = await this.list(path, cursor);
      const last = items.length > 0 ? text(items[items.length - 1]?.key) : null;
      if (!hasMore || !last)
        throw new ImportSourceError(
          `PartnerStack's ${path} now ends before page ${page}, where the import stopped; start a new import`,
        );
      cursor = last;
    }
    this.cursors.set(`${path}#${page}`, cursor);
    return cursor;
  }

  private async list(path: string, cursor: string | null): Promise<{ items: Json[]; hasMore: boolean }> {
    const query = new URLSearchParams({ limit: String(PAGE_SIZE) });
    if (cursor) query.set('starting_after', cursor);
    const body = (await getJson(this.http, `${path}?${query}`)) as Json;
    const data = body?.data;
    const items = Array.isArray(data?.items) ? data.items : Array.isArray(data) ? data : undefined;
    if (!items) throw new ImportSourceError(`PartnerStack answered ${path} without a list of items`);
    return { items: items as Json[], hasMore: (data?.has_more ?? body?.has_more) === true };
  }
}

function toAffiliate(row: Json): SourceAffiliate {
  const key = required(row.key, 'key');
  const name = [text(row.first_name), text(row.last_name)].filter(Boolean).join(' ') || null;
  const approval = text(row.approved_status);
  const status =
    row.archived === true || approval === 'declined' || approval === 'rejected'
      ? 'disabled'
      : approval === 'pending'
        ? 'pending'
        : 'active';
  const tokens = [text(row.partner_key)].filter((t): t is string => t !== null);
  return {
    source_id: key,
    email: email(row.email),
    name,
    status,
    payout_email: null,
    tokens,
    created_at: dateOrNull(row.joined_at, row.created_at),
  };
}

/** The merchant's own id of a customer: its `customer_key`, else the payment provider's id, else PartnerStack's key. */
function customerIdOf(row: Json): string | null {
  return text(row?.customer_key) ?? text(row?.external_key) ?? text(row?.provider_key) ?? text(row?.key);
}

function toCustomer(row: Json): SourceCustomer {
  required(row.key, 'key');
  const customerId = customerIdOf(row)!;
  const partnership = text(row.partnership_key) ?? text(row.partner_key) ?? text(row.partnership?.key);
  if (!partnership) throw new Unmappable('no partnership: not referred by a partner');
  return {
    source_id: customerId,
    customer_id: customerId,
    email: text(row.email),
    name: text(row.name),
    affiliate_source_id: partnership,
    created_at: dateOrNull(row.created_at),
  };
}

function toCommission(row: Json): SourceCommission {
  const key = required(row.key, 'key');
  const status = STATUSES[String(row.reward_status)];
  if (!status) throw new Unmappable(`unknown reward_status ${JSON.stringify(row.reward_status ?? null)}`);
  const transaction = row.transaction as Json | null | undefined;
  if (!transaction)
    throw new Unmappable('no transaction: a reward for an action, not a sale, nothing to record it against');
  const partnership = text(row.partnership?.key) ?? text(row.partnership_key);
  if (!partnership) throw new Unmappable('no partnership');
  const currency = currencyOf(row.currency);
  const saleCurrency = currencyOf(transaction.currency ?? row.currency);
  const saleKey = required(transaction.key, 'transaction.key');
  const customerId = row.customer ? customerIdOf(row.customer) : null;
  const createdAt = date(row.created_at, 'created_at');
  return {
    source_id: key,
    affiliate_source_id: partnership,
    status,
    amount: minor(row.amount, currency, 'amount'),
    currency,
    approves_at: null,
    // When PartnerStack approved a reward is not in the object: unknown, left empty.
    approved_at: null,
    payout_source_id: null,
    sale: {
      source_id: saleKey,
      external_id: saleKey,
      amount: minor(transaction.amount, saleCurrency, 'transaction.amount'),
      refunded_amount: '0',
      currency: saleCurrency,
      occurred_at:
        transaction.created_at !== undefined && transaction.created_at !== null
          ? date(transaction.created_at, 'transaction.created_at')
          : createdAt,
      customer: customerId
        ? {
            source_id: customerId,
            customer_id: customerId,
            email: text(row.customer.email),
            name: text(row.customer.name),
            affiliate_source_id: partnership,
          }
        : null,
    },
  };
}
