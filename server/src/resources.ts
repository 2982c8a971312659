import type * as Contract from '@affiliate-attribution/contract';

/**
 * The resources as the server builds them: the contract's types with `livemode` left to the one
 * filler (http/livemode.ts), which sets it from the request on the way out. Server code imports
 * resource types from here; clients (SDK, dashboard) see the contract's own, where it is required.
 */
export type Program = Unfilled<Contract.Program>;
export type Affiliate = Unfilled<Contract.Affiliate>;
export type Click = Unfilled<Contract.Click>;
export type Customer = Unfilled<Contract.Customer>;
export type Conversion = Unfilled<Contract.Conversion>;
export type Commission = Unfilled<Contract.Commission>;
export type Payout = Unfilled<Contract.Payout>;
export type Coupon = Unfilled<Contract.Coupon>;
export type WebhookEndpoint = Unfilled<Contract.WebhookEndpoint>;
export type WebhookDelivery = Unfilled<Contract.WebhookDelivery>;
export type Import = Unfilled<Contract.Import>;
export type Integration = Unfilled<Contract.Integration>;
export type ReceivedWebhookEvent = Unfilled<Contract.ReceivedWebhookEvent>;
export type AffiliateReportRow = Unfilled<Contract.AffiliateReportRow>;
export type PartnerProgram = Unfilled<Contract.PartnerProgram>;
export type PartnerMembership = Unfilled<Contract.PartnerMembership>;
export type Partner = Unfilled<Contract.Partner>;
export type PartnerCustomer = Unfilled<Contract.PartnerCustomer>;
export type PartnerCommission = Unfilled<Contract.PartnerCommission>;
export type PartnerPayout = Unfilled<Contract.PartnerPayout>;
export type JoinPage = Unfilled<Contract.JoinPage>;
export type PortalOrganization = Contract.PortalOrganization;
export type Application = Unfilled<Contract.Application>;

/**
 * A resource as a route builds it: `livemode` may be left out (filled from the request on the
 * way out, http/livemode.ts), at any depth. Serializers return this; what the client receives has it.
 */
export type Unfilled<T> = T extends readonly (infer U)[]
  ? Unfilled<U>[]
  : T extends object
    ? { [K in keyof T as K extends 'livemode' ? never : K]: Unfilled<T[K]> } & { livemode?: boolean }
    : T;
