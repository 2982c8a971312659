import { merchantContract } from '@affiliate-attribution/contract';
import { Transport, type Fetch, type RequestOptions } from './core/transport.js';
import { isBrowserLike } from './environment.js';
import { Requester } from './requester.js';
import {
  Affiliates,
  Clicks,
  Commissions,
  Conversions,
  Coupons,
  Customers,
  Integrations,
  Payouts,
  Programs,
  Reports,
  WebhookEndpoints,
} from './resources.js';

export const DEFAULT_TIMEOUT_MS = 30_000;
export const DEFAULT_MAX_RETRIES = 2;

export interface ClientOptions {
  /** Organization API key (`svc-…`). Server-side only: the constructor refuses to run in a browser. */
  apiKey: string;
  /** Base address of the service, e.g. `https://affiliates.example.com`. */
  baseUrl: string;
  /** Milliseconds to wait for each attempt before a TimeoutError; default 30 000. */
  timeoutMs?: number;
  /** Retries after a connection error, a timeout, a 429 or a 5xx; default 2 (0 disables them). */
  maxRetries?: number;
  /** A Fetch implementation; default `globalThis.fetch`. */
  fetch?: Fetch;
  /** Headers sent with every request. */
  headers?: Record<string, string>;
}

/**
 * The client of the Affiliate Attribution API.
 *
 * ```ts
 * const client = new Client({ apiKey: process.env.AFFILIATE_API_KEY!, baseUrl: 'https://affiliates.example.com' });
 * const { customer } = await client.customers.create({ customer_id: 'cus_123', cookie_id: getCookieId(req) });
 * ```
 */
export class Client {
  readonly programs: Programs;
  readonly affiliates: Affiliates;
  readonly clicks: Clicks;
  readonly customers: Customers;
  readonly conversions: Conversions;
  readonly integrations: Integrations;
  readonly commissions: Commissions;
  readonly coupons: Coupons;
  readonly payouts: Payouts;
  readonly webhookEndpoints: WebhookEndpoints;
  readonly reports: Reports;
  readonly #requester: Requester;

  constructor(options: ClientOptions) {
    if (isBrowserLike()) {
      throw new Error(
        'The Affiliate Attribution API key is a server-side secret and must never reach a browser. Call the API from your backend, and use the tracking snippet (/snippet.js) in pages.',
      );
    }
    if (!options || typeof options !== 'object') throw new TypeError('new Client(options): options are required');
    const { apiKey, baseUrl } = options;
    if (typeof apiKey !== 'string' || apiKey.trim() === '') {
      throw new TypeError(
        'new Client({ apiKey }): apiKey is required (your organization API key: `svc_test_…` for test data, `svc-…` for live)',
      );
    }
    if (typeof baseUrl !== 'string' || baseUrl === '') {
      throw new TypeError('new Client({ baseUrl }): baseUrl is required, e.g. "https://affiliates.example.com"');
    }
    let url: URL;
    try {
      url = new URL(baseUrl);
    } catch {
      throw new TypeError(`new Client({ baseUrl }): "${baseUrl}" is not an absolute URL`);
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') {
      throw new TypeError(`new Client({ baseUrl }): "${baseUrl}" must be an http:// or https:// URL`);
    }
    const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    if (!Number.isFinite(timeoutMs) || timeoutMs <= 0)
      throw new TypeError('new Client({ timeoutMs }): expected a positive number of milliseconds');
    const maxRetries = options.maxRetries ?? DEFAULT_MAX_RETRIES;
    if (!Number.isInteger(maxRetries) || maxRetries < 0)
      throw new TypeError('new Client({ maxRetries }): expected an integer >= 0');
    const fetchImpl = options.fetch ?? globalThis.fetch;
    if (typeof fetchImpl !== 'function') {
      throw new TypeError(
        'new Client(): no global fetch in this runtime (Node.js 20 or later has one); pass options.fetch',
      );
    }

    const transport = new Transport({
      apiKey: apiKey.trim(),
      baseUrl: (url.origin + url.pathname).replace(/\/+$/, ''),
      timeoutMs,
      maxRetries,
      fetch: options.fetch ?? ((input, init) => globalThis.fetch(input, init)),
      headers: { ...options.headers },
    });
    this.#requester = new Requester(transport);
    this.programs = new Programs(this.#requester);
    this.affiliates = new Affiliates(this.#requester);
    this.clicks = new Clicks(this.#requester);
    this.customers = new Customers(this.#requester);
    this.conversions = new Conversions(this.#requester);
    this.integrations = new Integrations(this.#requester);
    this.commissions = new Commissions(this.#requester);
    this.coupons = new Coupons(this.#requester);
    this.payouts = new Payouts(this.#requester);
    this.webhookEndpoints = new WebhookEndpoints(this.#requester);
    this.reports = new Reports(this.#requester);
  }

  /**
   * The organization the API key belongs to, and the key's mode (`organization.livemode`: false for
   * a test key, `svc_test_…`); an authenticated health check. Resolves to `{ organization }`.
   */
  me(options?: RequestOptions) {
    return this.#requester.call(merchantContract.me.get, {}, options);
  }

  /**
   * Deletes all of the organization's test data (test keys only: a live key is refused with a
   * PermissionDeniedError, and live data is never touched); test API keys, integrations and
   * webhook endpoints are kept. Resolves to `{ deleted, deletion }`: rows deleted per table, and
   * the deletion job; a large reset resolves while it still runs (`deletion.status` `running`):
   * follow it with testDataDeletion() until `completed`.
   */
  deleteTestData(options?: RequestOptions) {
    return this.#requester.call(merchantContract.testData.delete, {}, options);
  }

  /** The latest test-data deletion and its progress (test keys only). Resolves to `{ deletion }`. */
  testDataDeletion(options?: RequestOptions) {
    return this.#requester.call(merchantContract.testData.getDeletion, {}, options);
  }
}
