export { Client, DEFAULT_MAX_RETRIES, DEFAULT_TIMEOUT_MS, type ClientOptions } from './client.js';
export {
  Programs,
  Affiliates,
  Clicks,
  Customers,
  Conversions,
  Integrations,
  Commissions,
  Coupons,
  Payouts,
  WebhookEndpoints,
  Reports,
} from './resources.js';
export { APIPromise, type APIResponse } from './core/api-promise.js';
export { Page, PagePromise } from './core/pagination.js';
export type { Fetch, FetchInit, RequestOptions } from './core/transport.js';
export {
  AffiliateAttributionError,
  APIError,
  ValidationError,
  AuthenticationError,
  PermissionDeniedError,
  NotFoundError,
  AttributionNotFoundError,
  ConflictError,
  AttributionWindowExpiredError,
  RateLimitError,
  InternalServerError,
  ConnectionError,
  TimeoutError,
  UserAbortError,
  NO_ATTRIBUTION_MESSAGE,
} from './errors.js';
export { getCookieId, ATTRIBUTION_COOKIE, type CookieSource } from './cookie.js';
export { VERSION } from './version.js';
export type { RequestBody, RequestQuery, PathParams, ResultOf, PageItem, SuccessBody } from './types.js';
export * from './models.js';
