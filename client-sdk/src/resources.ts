/** The SDK's resources, one class per part of the merchant contract (client.ts puts them together). */
import { merchantContract } from '@affiliate-attribution/contract';
import type { RequestOptions } from './core/transport.js';
import { Resource, pathFor, type Routes } from './requester.js';
import type { PathParams, RequestBody, RequestQuery, ResultOf } from './types.js';

type R = Routes;

export class Programs extends Resource {
  /** Creates an affiliate program with its commission rule and windows. Resolves to `{ program }`. */
  create(body: RequestBody<R['programs']['create']>, options?: RequestOptions) {
    return this.requester.call(merchantContract.programs.create, { body }, options);
  }

  /** Lists programs, oldest first. Await for one page, or `for await` over every program. */
  list(query?: RequestQuery<R['programs']['list']>, options?: RequestOptions) {
    return this.requester.list(merchantContract.programs.list, query, options);
  }

  /** Returns one program by id. Resolves to `{ program }`. */
  get(id: PathParams<R['programs']['get']>['id'], options?: RequestOptions) {
    return this.requester.call(merchantContract.programs.get, { params: { id } }, options);
  }

  /** Changes program fields; past commissions are not recomputed. Resolves to `{ program }`. */
  update(
    id: PathParams<R['programs']['update']>['id'],
    body: RequestBody<R['programs']['update']>,
    options?: RequestOptions,
  ) {
    return this.requester.call(merchantContract.programs.update, { params: { id }, body }, options);
  }
}

export class Affiliates extends Resource {
  /**
   * Adds a partner (email) to a program. Idempotent per (email, program): a repeat resolves to the
   * existing membership with `deduped: true`. A slug taken by another membership: ConflictError.
   * Resolves to `{ affiliate, deduped }`.
   */
  create(body: RequestBody<R['affiliates']['create']>, options?: RequestOptions) {
    return this.requester.call(merchantContract.affiliates.create, { body }, options);
  }

  /** Lists affiliates, oldest first, optionally by program or e-mail. Await for one page, or `for await` over all. */
  list(query?: RequestQuery<R['affiliates']['list']>, options?: RequestOptions) {
    return this.requester.list(merchantContract.affiliates.list, query, options);
  }

  /** Returns one affiliate membership by id. Resolves to `{ affiliate }`. */
  get(id: PathParams<R['affiliates']['get']>['id'], options?: RequestOptions) {
    return this.requester.call(merchantContract.affiliates.get, { params: { id } }, options);
  }

  /** Changes the partner's `name` or `payout_email` (null clears it). Resolves to `{ affiliate }`. */
  update(
    id: PathParams<R['affiliates']['update']>['id'],
    body: RequestBody<R['affiliates']['update']>,
    options?: RequestOptions,
  ) {
    return this.requester.call(merchantContract.affiliates.update, { params: { id }, body }, options);
  }

  /**
   * Erases the partner's personal details on their request, in every membership of their e-mail:
   * name and e-mails gone, memberships disabled, no more sign-in; the ledger keeps its amounts.
   * Resolves to `{ affiliate }`.
   */
  erase(id: PathParams<R['affiliates']['erase']>['id'], options?: RequestOptions) {
    return this.requester.call(merchantContract.affiliates.erase, { params: { id } }, options);
  }

  /** The partner's tax form and whether it holds their payouts (`require_tax_form`). Resolves to `{ affiliate_id, tax_form, payout_hold }`. */
  taxForm(id: PathParams<R['taxForms']['get']>['id'], options?: RequestOptions) {
    return this.requester.call(merchantContract.taxForms.get, { params: { id } }, options);
  }

  /** Accepts the partner's tax form (owner-only): payouts it held are created by the next payout run. Resolves to `{ affiliate_id, tax_form, payout_hold }`. */
  acceptTaxForm(id: PathParams<R['taxFormReview']['accept']>['id'], options?: RequestOptions) {
    return this.requester.call(merchantContract.taxFormReview.accept, { params: { id }, body: {} }, options);
  }

  /** Rejects the partner's tax form with a reason they read in the portal (owner-only). Resolves to `{ affiliate_id, tax_form, payout_hold }`. */
  rejectTaxForm(id: PathParams<R['taxFormReview']['reject']>['id'], reason: string, options?: RequestOptions) {
    return this.requester.call(merchantContract.taxFormReview.reject, { params: { id }, body: { reason } }, options);
  }

  /** Creates the partner's Stripe Express account (once) and a Stripe onboarding link to send them. Resolves to `{ url, expires_at, stripe_account_id }`. */
  stripeOnboarding(id: PathParams<R['stripeOnboarding']['create']>['id'], options?: RequestOptions) {
    return this.requester.call(merchantContract.stripeOnboarding.create, { params: { id }, body: {} }, options);
  }
}

export class Clicks extends Resource {
  /**
   * Registers a click server-side. Resolves to `{ click }`; pass `click.cookie_id` (or `click.id`
   * as `click_id`) when the visitor signs up or pays. An unknown `ref`: AttributionNotFoundError.
   */
  create(body: RequestBody<R['clicks']['create']>, options?: RequestOptions) {
    return this.requester.call(merchantContract.clicks.create, { body }, options);
  }
}

export class Customers extends Resource {
  /**
   * Tracks a customer attributed by `cookie_id`, `ref` or `click_id`. Idempotent on `customer_id`:
   * a repeat resolves to the existing customer with `deduped: true`. Resolves to `{ customer, deduped }`.
   */
  create(body: RequestBody<R['customers']['create']>, options?: RequestOptions) {
    return this.requester.call(merchantContract.customers.create, { body }, options);
  }

  /** Returns a customer by the service's UUID or your `customer_id`. Resolves to `{ customer }`. */
  get(id: PathParams<R['customers']['get']>['id'], options?: RequestOptions) {
    return this.requester.call(merchantContract.customers.get, { params: { id } }, options);
  }

  /** Sets the status (e.g. `canceled`, or `active` on reactivation). Resolves to `{ customer }`. */
  update(
    id: PathParams<R['customers']['update']>['id'],
    body: RequestBody<R['customers']['update']>,
    options?: RequestOptions,
  ) {
    return this.requester.call(merchantContract.customers.update, { params: { id }, body }, options);
  }
}

export class Conversions extends Resource {
  /**
   * Records a sale and computes the commission: by click (`cookie_id`, `ref`, `click_id`) for a
   * first sale, by `customer_id` for recurring charges. Idempotent on `external_id`: a repeat
   * resolves to the existing conversion with `deduped: true`. Resolves to `{ conversion, deduped }`.
   */
  create(body: RequestBody<R['conversions']['create']>, options?: RequestOptions) {
    return this.requester.call(merchantContract.conversions.create, { body }, options);
  }

  /** Lists conversions, newest first, with filters. Await for one page, or `for await` over all. */
  list(query?: RequestQuery<R['conversions']['list']>, options?: RequestOptions) {
    return this.requester.list(merchantContract.conversions.list, query, options);
  }

  /** Returns a conversion by the service's UUID or your `external_id`. Resolves to `{ conversion }`. */
  get(id: PathParams<R['conversions']['get']>['id'], options?: RequestOptions) {
    return this.requester.call(merchantContract.conversions.get, { params: { id } }, options);
  }

  /**
   * Reports a refund of a conversion (by UUID or `external_id`), in full (no `amount`) or in part.
   * A full refund reverses the commission. Idempotent: a repeat resolves with `deduped: true` and
   * changes nothing. Resolves to `{ conversion, deduped }`.
   */
  refund(
    id: PathParams<R['conversions']['refund']>['id'],
    body: RequestBody<R['conversions']['refund']> = {},
    options?: RequestOptions,
  ) {
    return this.requester.call(merchantContract.conversions.refund, { params: { id }, body }, options);
  }
}

/** A payment provider whose webhooks the service verifies: `stripe`, `paddle`, `lemonsqueezy`, `polar` or `chargebee`. */
type Provider = ResultOf<R['integrations']['list']>['integrations'][number]['provider'];

export class Integrations extends Resource {
  /** Every supported payment provider and whether its signing secret is configured. Resolves to `{ integrations }`. */
  list(options?: RequestOptions) {
    return this.requester.call(merchantContract.integrations.list, {}, options);
  }

  /**
   * Stores (or rotates) the webhook signing secret of a provider, exactly as the provider shows it.
   * The secret is write-only. Resolves to `{ integration }`, whose `webhook_path` is the path to
   * register in the provider's dashboard.
   */
  set(provider: Provider, body: RequestBody<R['integrations']['put']>, options?: RequestOptions) {
    return this.requester.call(merchantContract.integrations.put, { params: { provider }, body }, options);
  }

  /** Forgets a provider's signing secret: its webhooks are refused from then on. Resolves to `{ integration }`. */
  delete(provider: Provider, options?: RequestOptions) {
    return this.requester.call(merchantContract.integrations.delete, { params: { provider } }, options);
  }

  /**
   * The provider webhooks received, newest first, with their outcome (`processed`, `ignored` or
   * `rejected`, and why in `detail`); filter by `provider` and `outcome`. A page; `for await` walks
   * every page.
   */
  events(query?: RequestQuery<R['integrations']['listEvents']>, options?: RequestOptions) {
    return this.requester.list(merchantContract.integrations.listEvents, query, options);
  }
}

export class Commissions extends Resource {
  /** Lists ledger entries, newest first, with filters (`status`, `type`, `affiliate_id`, …). Await for one page, or `for await` over all. */
  list(query?: RequestQuery<R['commissions']['list']>, options?: RequestOptions) {
    return this.requester.list(merchantContract.commissions.list, query, options);
  }

  /** Returns one ledger entry. Resolves to `{ commission }`. */
  get(id: PathParams<R['commissions']['get']>['id'], options?: RequestOptions) {
    return this.requester.call(merchantContract.commissions.get, { params: { id } }, options);
  }

  /** Adds a manual `adjustment` (a bonus, or a negative correction), approved at once. Resolves to `{ commission }`. */
  adjust(body: RequestBody<R['commissions']['create']>, options?: RequestOptions) {
    return this.requester.call(merchantContract.commissions.create, { body }, options);
  }

  /** Approves a `pending` or `on_hold` entry now (a repeat changes nothing; other statuses: ConflictError). Resolves to `{ commission }`. */
  approve(id: PathParams<R['commissions']['approve']>['id'], options?: RequestOptions) {
    return this.requester.call(merchantContract.commissions.approve, { params: { id }, body: {} }, options);
  }

  /** Rejects an entry no payout carries, with an optional `reason`. Resolves to `{ commission }`. */
  reject(
    id: PathParams<R['commissions']['reject']>['id'],
    body: RequestBody<R['commissions']['reject']> = {},
    options?: RequestOptions,
  ) {
    return this.requester.call(merchantContract.commissions.reject, { params: { id }, body }, options);
  }
}

export class Coupons extends Resource {
  /** Gives an affiliate a promotion code (unique per organization, case-insensitive: a code taken is ConflictError). Resolves to `{ coupon }`. */
  create(body: RequestBody<R['coupons']['create']>, options?: RequestOptions) {
    return this.requester.call(merchantContract.coupons.create, { body }, options);
  }

  /** Lists coupon codes, oldest first, optionally one affiliate's. Await for one page, or `for await` over every code. */
  list(query?: RequestQuery<R['coupons']['list']>, options?: RequestOptions) {
    return this.requester.list(merchantContract.coupons.list, query, options);
  }

  /** Deletes a code: it attributes nothing from then on. Resolves to `{ coupon }`. */
  delete(id: PathParams<R['coupons']['delete']>['id'], options?: RequestOptions) {
    return this.requester.call(merchantContract.coupons.delete, { params: { id } }, options);
  }
}

export class Payouts extends Resource {
  /** Gathers approved entries into one payout per (affiliate, program, currency). Resolves to `{ payouts, held }` (`held`: those a program's `require_tax_form` holds). */
  create(body: RequestBody<R['payouts']['create']> = {}, options?: RequestOptions) {
    return this.requester.call(merchantContract.payouts.create, { body }, options);
  }

  /** Lists payouts, newest first, with filters. Await for one page, or `for await` over all. */
  list(query?: RequestQuery<R['payouts']['list']>, options?: RequestOptions) {
    return this.requester.list(merchantContract.payouts.list, query, options);
  }

  /** Returns one payout. Resolves to `{ payout }`. */
  get(id: PathParams<R['payouts']['get']>['id'], options?: RequestOptions) {
    return this.requester.call(merchantContract.payouts.get, { params: { id } }, options);
  }

  /** Marks a pending payout paid, with your transfer's `reference`: its entries are paid for good. Resolves to `{ payout }`. */
  markPaid(
    id: PathParams<R['payouts']['markPaid']>['id'],
    body: RequestBody<R['payouts']['markPaid']> = {},
    options?: RequestOptions,
  ) {
    return this.requester.call(merchantContract.payouts.markPaid, { params: { id }, body }, options);
  }

  /** Cancels a pending payout: its entries go back to `approved`. Resolves to `{ payout }`. */
  cancel(id: PathParams<R['payouts']['cancel']>['id'], options?: RequestOptions) {
    return this.requester.call(merchantContract.payouts.cancel, { params: { id }, body: {} }, options);
  }
}

export class WebhookEndpoints extends Resource {
  /**
   * Registers an `https://` URL for the given event types. Resolves to `{ webhook_endpoint, secret }`:
   * the `whsec_…` secret is shown this once; verify deliveries with it (the `standardwebhooks` package).
   */
  create(body: RequestBody<R['webhookEndpoints']['create']>, options?: RequestOptions) {
    return this.requester.call(merchantContract.webhookEndpoints.create, { body }, options);
  }

  /** Lists endpoints, oldest first (secrets are never listed). Await for one page, or `for await` over all. */
  list(query?: RequestQuery<R['webhookEndpoints']['list']>, options?: RequestOptions) {
    return this.requester.list(merchantContract.webhookEndpoints.list, query, options);
  }

  /** Returns one endpoint. Resolves to `{ webhook_endpoint }`. */
  get(id: PathParams<R['webhookEndpoints']['get']>['id'], options?: RequestOptions) {
    return this.requester.call(merchantContract.webhookEndpoints.get, { params: { id } }, options);
  }

  /** Changes `url`, `events`, `description` or `enabled`. Resolves to `{ webhook_endpoint }`. */
  update(
    id: PathParams<R['webhookEndpoints']['update']>['id'],
    body: RequestBody<R['webhookEndpoints']['update']>,
    options?: RequestOptions,
  ) {
    return this.requester.call(merchantContract.webhookEndpoints.update, { params: { id }, body }, options);
  }

  /** Deletes an endpoint and its delivery log. Resolves to `{ webhook_endpoint }` as it was. */
  delete(id: PathParams<R['webhookEndpoints']['delete']>['id'], options?: RequestOptions) {
    return this.requester.call(merchantContract.webhookEndpoints.delete, { params: { id } }, options);
  }

  /** Issues a new secret (shown once); the old one keeps signing alongside for 24 hours. Resolves to `{ webhook_endpoint, secret }`. */
  rotateSecret(id: PathParams<R['webhookEndpoints']['rotateSecret']>['id'], options?: RequestOptions) {
    return this.requester.call(merchantContract.webhookEndpoints.rotateSecret, { params: { id }, body: {} }, options);
  }

  /** The endpoint's delivery log, newest first (filter by `status`). Await for one page, or `for await` over all. */
  deliveries(
    id: PathParams<R['webhookEndpoints']['listDeliveries']>['id'],
    query?: RequestQuery<R['webhookEndpoints']['listDeliveries']>,
    options?: RequestOptions,
  ) {
    return this.requester.list(
      {
        ...merchantContract.webhookEndpoints.listDeliveries,
        path: pathFor(merchantContract.webhookEndpoints.listDeliveries, { id }),
      },
      query,
      options,
    );
  }

  /** Sends a delivery's event again now, with the same `webhook-id`. Resolves to `{ delivery }`. */
  retryDelivery(id: PathParams<R['webhookEndpoints']['retryDelivery']>['id'], options?: RequestOptions) {
    return this.requester.call(merchantContract.webhookEndpoints.retryDelivery, { params: { id }, body: {} }, options);
  }
}

export class Reports extends Resource {
  /**
   * Clicks, customers, conversions, revenue, refunds and commissions by status per affiliate and
   * currency over `[from, to)` (ISO-8601), highest revenue first; optionally one `program_id` or
   * `currency`. Exact and current. Await for one page, or `for await` over every row.
   */
  affiliates(query: RequestQuery<R['reports']['affiliates']>, options?: RequestOptions) {
    return this.requester.list(merchantContract.reports.affiliates, query, options);
  }

  /**
   * The same figures per `interval` (`day`, `week` from Monday, `month`; UTC) over `[from, to)`,
   * one point per period and currency, empty periods as zeros, for charts. Resolves to `{ interval, points }`.
   */
  timeseries(query: RequestQuery<R['reports']['timeseries']>, options?: RequestOptions) {
    return this.requester.call(merchantContract.reports.timeseries, { query }, options);
  }
}
