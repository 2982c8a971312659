import type { merchantContract } from '@affiliate-attribution/contract';
import type { RequestBody, RequestQuery, ResultOf } from './types.js';

/** Named types of the API's objects and parameters, all computed from the contract. */
type R = typeof merchantContract;

export type Organization = ResultOf<R['me']['get']>['organization'];
export type Program = ResultOf<R['programs']['get']>['program'];
export type Affiliate = ResultOf<R['affiliates']['get']>['affiliate'];
export type Click = ResultOf<R['clicks']['create']>['click'];
export type Customer = ResultOf<R['customers']['get']>['customer'];
export type CustomerStatus = Customer['status'];
export type Conversion = ResultOf<R['conversions']['get']>['conversion'];
export type ConversionKind = Conversion['kind'];
export type ConversionStatus = Conversion['status'];
export type Integration = ResultOf<R['integrations']['list']>['integrations'][number];
/** Every integration: a payment provider or a payout rail. */
export type IntegrationProvider = Integration['provider'];
/** A provider webhook received and its outcome (`client.integrations.events()`). */
export type ReceivedWebhookEvent = ResultOf<R['integrations']['listEvents']>['webhook_events'][number];
/** A payment provider whose webhooks record sales (the log of received webhooks lists the PayPal and Wise payout webhooks too). */
export type WebhookProvider = Exclude<ReceivedWebhookEvent['provider'], 'paypal_payouts' | 'wise'>;
export type WebhookEndpoint = ResultOf<R['webhookEndpoints']['get']>['webhook_endpoint'];
/** An outbound event's type, e.g. `conversion.created`. */
export type OutboundEventType = WebhookEndpoint['events'][number];
export type WebhookDelivery = ResultOf<R['webhookEndpoints']['retryDelivery']>['delivery'];

export type ProgramCreateParams = RequestBody<R['programs']['create']>;
export type ProgramUpdateParams = RequestBody<R['programs']['update']>;
export type ProgramListParams = RequestQuery<R['programs']['list']>;
export type AffiliateCreateParams = RequestBody<R['affiliates']['create']>;
export type AffiliateListParams = RequestQuery<R['affiliates']['list']>;
export type ClickCreateParams = RequestBody<R['clicks']['create']>;
export type CustomerCreateParams = RequestBody<R['customers']['create']>;
export type CustomerUpdateParams = RequestBody<R['customers']['update']>;
export type ConversionCreateParams = RequestBody<R['conversions']['create']>;
export type ConversionListParams = RequestQuery<R['conversions']['list']>;
export type ConversionRefundParams = RequestBody<R['conversions']['refund']>;
export type IntegrationSetParams = RequestBody<R['integrations']['put']>;
export type WebhookEndpointCreateParams = RequestBody<R['webhookEndpoints']['create']>;
export type WebhookEndpointUpdateParams = RequestBody<R['webhookEndpoints']['update']>;

/** Results of the write methods, with `deduped`. */
export type AffiliateCreateResult = ResultOf<R['affiliates']['create']>;
export type CustomerCreateResult = ResultOf<R['customers']['create']>;
export type ConversionCreateResult = ResultOf<R['conversions']['create']>;
export type ConversionRefundResult = ResultOf<R['conversions']['refund']>;
