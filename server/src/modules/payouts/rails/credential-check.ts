import type { PayoutRail } from '@affiliate-attribution/contract';
import { PAYOUT_RAIL_HOSTS, payoutRailSettings, type PayoutRailSettings } from '../../../config.js';
import { BadRequestError, HttpError } from '../../../http/errors.js';
import type { PayPalCredentials, RailCredentials } from '../../integrations/integrations.service.js';
import { PayPalPayouts } from './paypal.js';
import { RailUnreachable } from './rail.js';

/** Asked before a rail's credentials are stored: throws (and nothing is stored) when they cannot work. */
export type RailCredentialCheck = <R extends PayoutRail>(provider: R, credentials: RailCredentials[R]) => Promise<void>;

/**
 * PayPal's credentials are tried with the token call payouts start with (POST /v1/oauth2/token), so
 * that a mistyped secret, or sandbox credentials saved as live, is said when the merchant saves
 * them rather than when their first payouts fail. PayPal refusing them: 400 with PayPal's reason;
 * PayPal not answering: 502, nothing saved, for the merchant to try again. Stripe Connect and Wise
 * are stored as given (their keys are checked when used).
 */
export function railCredentialCheck(
  settings: () => PayoutRailSettings = () => payoutRailSettings(),
): RailCredentialCheck {
  return async (provider, credentials) => {
    if (provider !== 'paypal_payouts') return;
    const paypal = credentials as PayPalCredentials;
    const base = settings().PAYPAL_API_BASE_URL ?? PAYOUT_RAIL_HOSTS.paypal[paypal.environment];
    let outcome: { refused: string } | undefined;
    try {
      outcome = await new PayPalPayouts(base, paypal).checkCredentials();
    } catch (err) {
      if (err instanceof RailUnreachable)
        throw new HttpError(
          502,
          `PayPal could not be reached to check these credentials (${err.message}): nothing was saved; try again`,
        );
      throw err;
    }
    if (outcome)
      throw new BadRequestError(
        `PayPal refused these credentials (${outcome.refused}): check client_id, client_secret and environment (an app's sandbox credentials with "sandbox", its live ones with "live": PayPal developer dashboard, Apps & Credentials); nothing was saved`,
      );
  };
}
