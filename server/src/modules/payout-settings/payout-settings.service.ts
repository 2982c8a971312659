import { createHash } from 'node:crypto';
import type { PartnerPayoutSettings, StripeOnboardingLink } from '@affiliate-attribution/contract';
import { PAYOUT_RAIL_HOSTS, payoutRailSettings, type PayoutRailSettings } from '../../config.js';
import { BadRequestError, ConflictError, HttpError, UnauthorizedError } from '../../http/errors.js';
import { iso } from '../../http/serialize.js';
import type { IntegrationsService } from '../integrations/integrations.service.js';
import type { PayoutMethod, PayoutSettingsRepository } from './payout-settings.repository.js';
import { StripeConnectClient, StripeFailed } from './stripe-connect.js';

/** The rail each payout method needs the merchant to have set up (`manual` needs none). */
const RAIL_OF: Record<Exclude<PayoutMethod, 'manual'>, string> = {
  paypal: 'paypal_payouts',
  stripe: 'stripe_connect',
  wise: 'wise',
};

/** Where the merchant's Stripe platform is reached, and with which key (p1's stripe_connect integration and STRIPE_API_BASE_URL). */
export interface StripePlatform {
  integrations: Pick<IntegrationsService, 'railCredentials'>;
  settings?: () => PayoutRailSettings;
}

/**
 * How partners are paid: their Stripe Connect onboarding (from the dashboard or the portal) and,
 * in the portal, their choice of payout method. A connected account is the person's: one per
 * e-mail with the merchant, stored on every membership of theirs.
 */
export class PayoutSettingsService {
  private readonly settings: () => PayoutRailSettings;

  constructor(
    private readonly repository: PayoutSettingsRepository,
    private readonly platform: StripePlatform,
    /** PUBLIC_BASE_URL: where Stripe sends the partner (or the merchant) back. */
    private readonly publicBaseUrl: string,
  ) {
    this.settings = platform.settings ?? (() => payoutRailSettings());
  }

  /** POST /api/affiliates/{id}/stripe-onboarding (403/404 by the ownership rule): back to the affiliate's page. */
  async onboardAffiliate(organizationId: string, id: string): Promise<StripeOnboardingLink> {
    const affiliate = await this.repository.ownedAffiliate(organizationId, id);
    const page = `${this.publicBaseUrl}/dashboard/affiliates/${affiliate.id}`;
    return this.onboard(
      organizationId,
      affiliate.email,
      affiliate.stripe_account_id ?? null,
      page,
      "Stripe Connect is not set up: an owner adds the Stripe platform's secret key on the Integrations page (PUT /api/integrations/stripe_connect) first",
    );
  }

  /** POST /partner/api/stripe-onboarding: back to the portal. */
  async onboardPartner(organizationId: string, email: string): Promise<StripeOnboardingLink> {
    const rows = await this.repository.partnerRows(organizationId, email);
    if (rows.length === 0) throw new UnauthorizedError('No partner with this e-mail any more');
    const page = `${this.publicBaseUrl}/portal/${organizationId}`;
    return this.onboard(
      organizationId,
      email,
      rows.find((r) => r.stripe_account_id)?.stripe_account_id ?? null,
      page,
      'This merchant does not pay through Stripe',
    );
  }

  private async onboard(
    organizationId: string,
    email: string,
    existing: string | null,
    page: string,
    notSetUp: string,
  ): Promise<StripeOnboardingLink> {
    const credentials = await this.platform.integrations.railCredentials(organizationId, 'stripe_connect');
    if (!credentials) throw new ConflictError(notSetUp);
    const client = new StripeConnectClient(
      this.settings().STRIPE_API_BASE_URL ?? PAYOUT_RAIL_HOSTS.stripe.live,
      credentials.secret_key,
    );
    try {
      let account = existing;
      if (!account) {
        // Derived from the person, so that concurrent or repeated first calls get one account from Stripe.
        const idempotencyKey = `svc-connect-account-${createHash('sha256').update(`${organizationId}:${email}`).digest('hex').slice(0, 40)}`;
        const created = await client.createExpressAccount({
          email,
          idempotencyKey,
          metadata: { organization_id: organizationId },
        });
        account = await this.repository.storeStripeAccount(organizationId, email, created);
      }
      const separator = page.includes('?') ? '&' : '?';
      const link = await client.createOnboardingLink(account, {
        refresh: `${page}${separator}stripe_onboarding=refresh`,
        return: `${page}${separator}stripe_onboarding=return`,
      });
      return { url: link.url, expires_at: iso(link.expires_at), stripe_account_id: account };
    } catch (err) {
      if (err instanceof StripeFailed) throw new HttpError(502, err.message);
      throw err;
    }
  }

  async partnerSettings(organizationId: string, email: string): Promise<PartnerPayoutSettings> {
    const [rows, rails] = await Promise.all([
      this.repository.partnerRows(organizationId, email),
      this.repository.rails(organizationId),
    ]);
    if (rows.length === 0) throw new UnauthorizedError('No partner with this e-mail any more');
    const available: PayoutMethod[] = [
      'manual',
      ...(['paypal', 'wise', 'stripe'] as const).filter((m) => rails.includes(RAIL_OF[m])),
    ];
    return {
      payout_method: rows[0].payout_method,
      payout_email: rows.find((r) => r.payout_email)?.payout_email ?? email,
      stripe_connected: rows.some((r) => r.stripe_account_id),
      available_methods: available,
    };
  }

  async setPartnerMethod(
    organizationId: string,
    email: string,
    input: { payout_method: PayoutMethod; payout_email?: string },
  ): Promise<PartnerPayoutSettings> {
    const current = await this.partnerSettings(organizationId, email);
    const method = input.payout_method;
    if (!current.available_methods.includes(method))
      throw new ConflictError(`payout_method: this merchant does not pay by ${method}`);
    if (method === 'stripe' && !current.stripe_connected)
      throw new ConflictError('payout_method: connect with Stripe first');
    const payoutEmail = input.payout_email?.trim().toLowerCase();
    if (
      (method === 'paypal' || method === 'wise') &&
      !payoutEmail &&
      !(await this.repository.partnerRows(organizationId, email)).some((r) => r.payout_email)
    ) {
      throw new BadRequestError(`payout_email: your ${method === 'paypal' ? 'PayPal' : 'Wise'} e-mail is required`);
    }
    await this.repository.setPartnerMethod(organizationId, email, method, payoutEmail);
    return this.partnerSettings(organizationId, email);
  }
}
