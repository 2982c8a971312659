import { z } from 'zod';
import {
  INTEGRATION_PROVIDERS,
  PAYOUT_RAILS,
  WEBHOOK_PROVIDERS,
  type IntegrationProvider,
  type PayoutRail,
  type PutIntegrationBody,
  type WebhookProvider,
} from '@affiliate-attribution/contract';
import { BadRequestError, NotFoundError } from '../../http/errors.js';
import type { Integration } from '../../resources.js';
import { iso, isUuid } from '../../http/serialize.js';
import { describeZodError, echoInput } from '../../http/validation-message.js';
import { SECRET_PURPOSE, SecretBox } from '../../security/secret-box.js';
import type { IntegrationRecord, IntegrationsRepository } from './integrations.repository.js';
import { newRowId } from '../../db/row-ids.js';
import type { RailCredentialCheck } from '../payouts/rails/credential-check.js';

export const isWebhookProvider = (value: string): value is WebhookProvider =>
  (WEBHOOK_PROVIDERS as readonly string[]).includes(value);
export const isPayoutRail = (value: string): value is PayoutRail => (PAYOUT_RAILS as readonly string[]).includes(value);

/** A payment provider (its webhooks record sales): the generic webhook route's providers. */
export function requireProvider(value: string): WebhookProvider {
  if (!isWebhookProvider(value))
    throw new NotFoundError(`Unknown provider: ${echoInput(value)}. Supported: ${WEBHOOK_PROVIDERS.join(', ')}`);
  return value;
}

function requireIntegrationProvider(value: string): IntegrationProvider {
  if (!isWebhookProvider(value) && !isPayoutRail(value))
    throw new NotFoundError(`Unknown provider: ${echoInput(value)}. Supported: ${INTEGRATION_PROVIDERS.join(', ')}`);
  return value;
}

const Environment = z.enum(['sandbox', 'live']);
const Text = z.string().min(1).max(4096);

/** What each rail needs (shared/spec/payout-rails.md); stored sealed as one JSON document. */
const RAIL_CREDENTIALS = {
  paypal_payouts: z.object({
    client_id: Text,
    client_secret: Text,
    environment: Environment,
    webhook_id: Text.optional(),
  }),
  stripe_connect: z.object({
    secret_key: z
      .string()
      .regex(/^(sk|rk)_(test|live)_[A-Za-z0-9_]+$/, 'Expected a Stripe secret key (sk_test_…, sk_live_…, rk_…)'),
  }),
  wise: z.object({
    api_token: Text,
    profile_id: z.preprocess(
      (v) => (typeof v === 'number' ? String(v) : v),
      z.string().regex(/^\d{1,20}$/, 'Expected a Wise profile id (digits)'),
    ),
    environment: Environment,
  }),
} as const;

export type PayPalCredentials = z.output<(typeof RAIL_CREDENTIALS)['paypal_payouts']>;
export type StripeConnectCredentials = z.output<(typeof RAIL_CREDENTIALS)['stripe_connect']>;
export type WiseCredentials = z.output<(typeof RAIL_CREDENTIALS)['wise']>;
export interface RailCredentials {
  paypal_payouts: PayPalCredentials;
  stripe_connect: StripeConnectCredentials;
  wise: WiseCredentials;
}

const SigningSecretBody = z.object({ signing_secret: z.string().min(8).max(1024) });

/** Where a provider's webhooks are posted (the rails' outcomes arrive at their own routes; Stripe Connect's transfers through the Stripe route). */
const WEBHOOK_PATH: Record<IntegrationProvider, string> = {
  stripe: 'stripe',
  paddle: 'paddle',
  lemonsqueezy: 'lemonsqueezy',
  polar: 'polar',
  chargebee: 'chargebee',
  paypal_payouts: 'paypal',
  stripe_connect: 'stripe',
  wise: 'wise',
};

function railEnvironment(provider: PayoutRail, credentials: RailCredentials[PayoutRail]): 'sandbox' | 'live' {
  if (provider === 'stripe_connect')
    return /^(sk|rk)_test_/.test((credentials as StripeConnectCredentials).secret_key) ? 'sandbox' : 'live';
  return (credentials as PayPalCredentials | WiseCredentials).environment;
}

/**
 * Per (organization, provider): a payment provider's webhook signing secret, or a payout rail's
 * credentials. Both must be kept in a form the service can use (an HMAC, an API call), so they are
 * encrypted at rest under ENCRYPTION_KEY (security/secret-box.ts; stored as given without a key);
 * they are write-only through the API.
 */
export class IntegrationsService {
  constructor(
    private readonly integrations: IntegrationsRepository,
    private readonly secrets: SecretBox = new SecretBox(undefined),
    /** Tries a rail's credentials with the provider before they are stored (payouts/rails/credential-check.ts). */
    private readonly checkRail?: RailCredentialCheck,
  ) {}

  /** `accountId`: the live organization's id, which webhook URLs carry (the same as `organizationId` in live mode). */
  async list(organizationId: string, accountId = organizationId): Promise<Integration[]> {
    const rows = await this.integrations.list(organizationId);
    return INTEGRATION_PROVIDERS.map((provider) =>
      this.toDto(
        accountId,
        provider,
        rows.find((r) => r.provider === provider),
      ),
    );
  }

  async put(
    organizationId: string,
    providerName: string,
    body: PutIntegrationBody,
    accountId = organizationId,
  ): Promise<Integration> {
    const provider = requireIntegrationProvider(providerName);
    const now = new Date();
    const credentials = isPayoutRail(provider) ? parsed(RAIL_CREDENTIALS[provider], body) : undefined;
    if (credentials) await this.checkRail?.(provider as PayoutRail, credentials);
    const sealed = credentials
      ? {
          signing_secret: null,
          credentials: this.secrets.seal(JSON.stringify(credentials), SECRET_PURPOSE.payoutRail),
        }
      : {
          signing_secret: this.secrets.seal(parsed(SigningSecretBody, body).signing_secret, SECRET_PURPOSE.integration),
          credentials: null,
        };
    const row = await this.integrations.upsert({
      id: newRowId(),
      organization_id: organizationId,
      provider,
      ...sealed,
      created_at: now,
      updated_at: now,
    });
    return this.toDto(accountId, provider, row);
  }

  async remove(organizationId: string, providerName: string, accountId = organizationId): Promise<Integration> {
    const provider = requireIntegrationProvider(providerName);
    await this.integrations.remove(organizationId, provider);
    return this.toDto(accountId, provider, undefined);
  }

  /** The secret webhooks of this provider are verified with; undefined when none is stored. */
  async signingSecret(organizationId: string, provider: WebhookProvider): Promise<string | undefined> {
    if (!isUuid(organizationId)) return undefined;
    const stored = (await this.integrations.stored(organizationId, provider))?.signing_secret;
    return stored == null ? undefined : this.secrets.open(stored, SECRET_PURPOSE.integration);
  }

  /** A payout rail's credentials; undefined when the rail is not configured. */
  async railCredentials<R extends PayoutRail>(
    organizationId: string,
    rail: R,
  ): Promise<RailCredentials[R] | undefined> {
    if (!isUuid(organizationId)) return undefined;
    const stored = (await this.integrations.stored(organizationId, rail))?.credentials;
    return stored == null
      ? undefined
      : (JSON.parse(this.secrets.open(stored, SECRET_PURPOSE.payoutRail)) as RailCredentials[R]);
  }

  /**
   * The webhook URL carries the account's id (the live organization's), in both modes: one URL per
   * provider, registered in the live dashboard and in the sandbox alike; where an event lands is
   * decided when it arrives (webhooks/mode.ts).
   */
  private toDto(accountId: string, provider: IntegrationProvider, row: IntegrationRecord | undefined): Integration {
    const rail = isPayoutRail(provider);
    const environment =
      rail && row?.credentials
        ? railEnvironment(
            provider,
            JSON.parse(this.secrets.open(row.credentials, SECRET_PURPOSE.payoutRail)) as RailCredentials[PayoutRail],
          )
        : undefined;
    return {
      provider,
      kind: rail ? 'payout_rail' : 'payment_provider',
      configured: row !== undefined,
      ...(environment ? { environment } : {}),
      webhook_path: `/webhooks/${WEBHOOK_PATH[provider]}/${accountId}`,
      updated_at: row ? iso(row.updated_at) : null,
    };
  }
}

function parsed<S extends z.ZodTypeAny>(schema: S, body: unknown): z.output<S> {
  const result = schema.safeParse(body);
  if (!result.success) throw new BadRequestError(describeZodError(result.error));
  return result.data as z.output<S>;
}
