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
  SourceRefund,
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
 * Tolt's REST API (https://docs.tolt.com/introduction, https://docs.tolt.com/authentication): the
 * API key as `Authorization: Bearer <key>`; a wrong key answers 401 `{ success: false, error: {
 * message, type: "authentication_error" } }`. Lists take `program_id` (required on
 * https://docs.tolt.com/partners/list), `limit` (max 100) and `starting_after`, and answer
 * `{ success, has_more, total_count, data }`.
 *
 * Pagination, decided from the documentation: the v1 reference (our default base URL,
 * https://api.tolt.com/v1) pages with `has_more` + `starting_after` = the last item's id; the newer
 * v2 reference (https://docs.tolt.com/api-reference/partners/list-partners) adds `next_cursor` and
 * says `starting_after` takes either "the next_cursor of a previous page, or an item id when
 * sorting by created_at". So: `starting_after` = `next_cursor` when the answer has one, else the
 * last item's id; stop when `has_more` is false. A cursor is not a page number: the reader keeps
 * page N's cursor from reading page N-1, and a resumed import (a new reader) walks the cursors
 * from page 1 again (re-reading, writing nothing twice).
 *
 * Objects read (documented fields):
 * - partners (https://docs.tolt.com/partners/list): id, email, first_name, last_name,
 *   payout_details.email, status (v2; absent in v1's example: read as active);
 * - links (https://docs.tolt.com/links/list, `partner_id` filter): value (the ref token, `?ref=sam`);
 * - customers (https://docs.tolt.com/customers/list): id, customer_id (the merchant's own id),
 *   email, name, partner_id;
 * - commissions (https://docs.tolt.com/commissions/retrieve, https://docs.tolt.com/concepts/commission-lifecycle):
 *   id, amount and revenue in cents (number or digit string), currency, status (pending, approved,
 *   paid, rejected, refunded), partner_id, customer_id, transaction_id, charge_id, payout_id,
 *   scheduled_approval_date, created_at; `expand[]=customer`.
 *
 * Not knowable from the documentation, decided here: v1 documents no payouts list, so paid
 * commissions sharing a `payout_id` become one paid payout (amount = their sum, paid at the latest
 * commission's `updated_at`, else `created_at`); a commission without `currency` (the v1 example
 * shows `null`) cannot be imported in its currency and is skipped with that reason; a 429's wait
 * (no limit documented: Retry-After honoured, else back off).
 */
export const TOLT_DEFAULT_BASE_URL = 'https://api.tolt.com/v1';
const PAGE_SIZE = 100;
/** The commissions phase's pages from here on read the list again for its refunds (readPage). */
const REFUND_PASS = 1_000_000;

interface ToltList {
  data: Json[];
  cursor: string | null;
}

export class ToltReader implements SourceReader {
  private readonly http: SourceHttpOptions;
  private readonly programId: string;
  /** `phase:page` -> the `starting_after` that reads it (page 1 has none). */
  private readonly cursors = new Map<string, string>();

  constructor(credentials: Record<string, string>, baseUrl: string, http: Partial<SourceHttpOptions> = {}) {
    const key = credentials.api_key;
    if (!key) throw new ImportSourceError('credentials.api_key: Required (Tolt API key)');
    const program = credentials.program_id;
    if (!program) throw new ImportSourceError('credentials.program_id: Required (the Tolt program to import, prg_…)');
    this.programId = program;
    this.http = {
      name: 'Tolt',
      baseUrl,
      credentialName: 'API key',
      headers: { authorization: `Bearer ${key}` },
      ...http,
    };
  }

  private async list(path: string, params: Record<string, string>, startingAfter?: string): Promise<ToltList> {
    const query = new URLSearchParams({ program_id: this.programId, limit: String(PAGE_SIZE), ...params });
    if (startingAfter) query.set('starting_after', startingAfter);
    const body = (await getJson(this.http, `${path}?${query}`)) as Json;
    if (!body || !Array.isArray(body.data)) throw new ImportSourceError(`Tolt answered ${path} without a data list`);
    const rows = body.data as Json[];
    const last = text(rows.at(-1)?.id);
    const cursor = body.has_more === true ? (text(body.next_cursor) ?? last) : null;
    return { data: rows, cursor };
  }

  /** Reads page `page` of a phase's list, walking the cursors from page 1 when a resumed import has not seen them. */
  private async page(
    phase: string,
    path: string,
    params: Record<string, string>,
    page: number,
  ): Promise<{ rows: Json[]; next: number | null }> {
    let at = page;
    while (at > 1 && !this.cursors.has(`${phase}:${at}`)) at--;
    for (;;) {
      const read = await this.list(path, params, this.cursors.get(`${phase}:${at}`));
      if (read.cursor) this.cursors.set(`${phase}:${at + 1}`, read.cursor);
      if (at === page) return { rows: read.data, next: read.cursor ? page + 1 : null };
      if (!read.cursor) return { rows: [], next: null };
      at++;
    }
  }

  async readPage(phase: Phase, page: number): Promise<SourcePage> {
    const skipped: Skip[] = [];
    switch (phase) {
      case 'affiliates': {
        const { rows, next } = await this.page(phase, '/partners', {}, page);
        const affiliates = collect(rows, 'affiliates', skipped, toAffiliate);
        for (const affiliate of affiliates) affiliate.tokens = await this.tokensOf(affiliate.source_id);
        return { batch: { affiliates, skipped }, next };
      }
      case 'customers': {
        const { rows, next } = await this.page(phase, '/customers', {}, page);
        return { batch: { customers: collect(rows, 'customers', skipped, toCustomer), skipped }, next };
      }
      case 'payouts':
        return { batch: { payouts: await this.payouts(skipped), skipped }, next: null };
      case 'commissions': {
        // Two passes over the list: the sales' commissions, then (pages from REFUND_PASS on) the
        // refunds of paid ones, whose sales are all here by then whatever order Tolt lists them in.
        if (page < REFUND_PASS) {
          const { rows, next } = await this.page(phase, '/commissions', { 'expand[]': 'customer' }, page);
          const sales = rows.filter((row) => row?.type !== 'refund');
          return {
            batch: { commissions: collect(sales, 'commissions', skipped, toCommission), skipped },
            next: next ?? REFUND_PASS + 1,
          };
        }
        const pass = page - REFUND_PASS;
        const { rows, next } = await this.page('refunds', '/commissions', {}, pass);
        const refunds = rows.filter((row) => row?.type === 'refund');
        return {
          batch: { refunds: collect(refunds, 'commissions', skipped, toRefund), skipped },
          next: next === null ? null : REFUND_PASS + next,
        };
      }
    }
  }

  private async tokensOf(partnerId: string): Promise<string[]> {
    const tokens: string[] = [];
    let after: string | undefined;
    do {
      const read = await this.list('/links', { partner_id: partnerId }, after);
      for (const link of read.data) {
        const token = text(link?.value);
        if (token && !tokens.includes(token)) tokens.push(token);
      }
      after = read.cursor ?? undefined;
    } while (after);
    return tokens;
  }

  /** Paid commissions grouped by `payout_id` (see the header: no payouts list is documented). */
  private async payouts(skipped: Skip[]): Promise<SourcePayout[]> {
    const byPayout = new Map<string, Json[]>();
    let after: string | undefined;
    do {
      const read = await this.list('/commissions', { status: 'paid' }, after);
      for (const row of read.data) {
        const payout = text(row?.payout_id);
        if (row?.status === 'paid' && payout) byPayout.set(payout, [...(byPayout.get(payout) ?? []), row]);
      }
      after = read.cursor ?? undefined;
    } while (after);
    const out: SourcePayout[] = [];
    for (const [payoutId, rows] of byPayout) {
      try {
        out.push(toPayout(payoutId, rows));
      } catch (err) {
        if (!(err instanceof Unmappable)) throw err;
        skipped.push({ kind: 'payouts', source_id: payoutId, reason: err.message });
      }
    }
    return out;
  }
}

function toAffiliate(row: Json): SourceAffiliate {
  const email = emailOf(row.email);
  const name = [text(row.first_name), text(row.last_name)].filter(Boolean).join(' ') || null;
  const state = text(row.status);
  const status = state === null || state === 'active' ? 'active' : state === 'pending' ? 'pending' : 'disabled';
  return {
    source_id: idOf(row),
    email,
    name,
    status,
    payout_email: text(row.payout_details?.email),
    tokens: [],
    created_at: dateOrNull(row.created_at),
  };
}

function customerFrom(customer: Json, partnerId: string | null): SourceCustomer {
  const id = idOf(customer);
  const customerId = text(customer.customer_id) ?? id;
  const affiliate = text(customer.partner_id) ?? partnerId;
  if (!affiliate) throw new Unmappable('no partner_id: not attributed to a partner');
  return {
    source_id: customerId,
    customer_id: customerId,
    email: text(customer.email),
    name: text(customer.name),
    affiliate_source_id: affiliate,
    created_at: dateOrNull(customer.created_at),
  };
}

const toCustomer = (row: Json): SourceCustomer => customerFrom(row, null);

function toPayout(payoutId: string, rows: Json[]): SourcePayout {
  const currencies = new Set(rows.map((r) => text(r.currency)?.toUpperCase() ?? null));
  if (currencies.size !== 1)
    throw new Unmappable(`its commissions are in ${currencies.size} currencies (${[...currencies].join(', ')})`);
  const currency = currencyOf(rows[0].currency);
  const partners = new Set(rows.map((r) => text(r.partner_id)));
  const partner = rows[0].partner_id;
  if (partners.size !== 1 || !text(partner)) throw new Unmappable('its commissions do not name one partner');
  let cents = 0;
  // Summed in minor units (exact integers), formatted once.
  for (const r of rows) cents += Number(minorUnits(r.amount, 'JPY', 'amount'));
  const paidAt = rows.map((r) => dateOf(r.updated_at ?? r.created_at, 'updated_at')).reduce((a, b) => (a > b ? a : b));
  return {
    source_id: payoutId,
    affiliate_source_id: text(partner)!,
    amount: minorUnits(cents, currency, 'amount'),
    currency,
    paid_at: paidAt,
    commission_source_ids: rows.map(idOf),
  };
}

const STATUSES: Record<string, ImportedCommissionStatus> = {
  pending: 'pending',
  approved: 'approved',
  paid: 'paid',
  rejected: 'reversed',
  refunded: 'reversed',
};

function toCommission(row: Json): SourceCommission {
  const status = STATUSES[String(row.status)];
  if (!status) throw new Unmappable(`unknown status ${JSON.stringify(row.status ?? null)}`);
  if (row.currency == null) throw new Unmappable('no currency: Tolt did not say which currency the amounts are in');
  const currency = currencyOf(row.currency);
  const affiliate = text(row.partner_id) ?? text(row.customer?.partner_id);
  if (!affiliate) throw new Unmappable('no partner_id');
  const saleId = text(row.transaction_id) ?? text(row.charge_id);
  if (!saleId) throw new Unmappable('no transaction_id or charge_id: nothing to record it against');
  const createdAt = dateOf(row.created_at, 'created_at');
  const scheduled = row.scheduled_approval_date ? dateOf(row.scheduled_approval_date, 'scheduled_approval_date') : null;
  const customer =
    row.customer && typeof row.customer === 'object'
      ? customerFrom(row.customer as Json, affiliate)
      : text(row.customer_id)
        ? {
            source_id: text(row.customer_id)!,
            customer_id: text(row.customer_id)!,
            email: null,
            name: null,
            affiliate_source_id: affiliate,
          }
        : null;
  return {
    source_id: idOf(row),
    affiliate_source_id: affiliate,
    status,
    amount: minorUnits(row.amount, currency, 'amount'),
    currency,
    approves_at: status === 'pending' ? scheduled : null,
    approved_at: status === 'approved' || status === 'paid' ? (scheduled ?? createdAt) : null,
    payout_source_id: status === 'paid' ? text(row.payout_id) : null,
    sale: {
      source_id: saleId,
      external_id: saleId,
      amount: minorUnits(row.revenue ?? 0, currency, 'revenue'),
      refunded_amount:
        status === 'reversed' && row.status === 'refunded' ? minorUnits(row.revenue ?? 0, currency, 'revenue') : '0',
      currency,
      occurred_at: createdAt,
      customer,
    },
    created_at: createdAt,
  };
}

/**
 * A refund of a paid commission's sale (https://docs.tolt.com/guides/refunds): Tolt never edits a
 * paid commission; it adds one of `type: "refund"` with a negative `amount`, on the same transaction,
 * netted against the partner's next payout. The whole transaction is refunded (Tolt's refunds are
 * of whole transactions), and the negative amount is the partner's clawback.
 */
function toRefund(row: Json): SourceRefund {
  if (row.currency == null) throw new Unmappable('no currency: Tolt did not say which currency the amounts are in');
  const currency = currencyOf(row.currency);
  const saleId = text(row.transaction_id) ?? text(row.charge_id);
  if (!saleId) throw new Unmappable('a refund without transaction_id or charge_id: nothing to record it against');
  const amount = minorUnits(row.amount, currency, 'amount');
  const back = amount.replace(/^-/, '');
  return {
    source_id: idOf(row),
    sale_source_id: saleId,
    amount: null,
    created_at: dateOrNull(row.created_at),
    clawback:
      Number(back) > 0
        ? {
            amount: back,
            currency,
            status: row.status === 'paid' ? 'paid' : 'approved',
            payout_source_id: row.status === 'paid' ? text(row.payout_id) : null,
          }
        : null,
  };
}
