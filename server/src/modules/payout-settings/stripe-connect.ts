import { call, joinUrl, RailUnreachable } from '../payouts/rails/rail.js';

/*
 * Stripe Connect onboarding, as Stripe documents it (read before writing this; nothing copied):
 * - Authentication: the secret key as a Bearer token https://docs.stripe.com/api/authentication
 * - Bodies are form-encoded, nested keys in brackets (`capabilities[transfers][requested]`)
 *   https://docs.stripe.com/api (Introduction: "accepts form-encoded request bodies")
 * - Create an account: POST /v1/accounts with `type=express`; a platform that pays its connected
 *   accounts with transfers requests the `transfers` capability; answers the Account object (`id`
 *   `acct_…`) https://docs.stripe.com/api/accounts/create https://docs.stripe.com/connect/express-accounts
 * - Create an account link: POST /v1/account_links with `account`, `type=account_onboarding`,
 *   `refresh_url` (where Stripe sends the user when the link expired or was used: make a new one)
 *   and `return_url`; answers `{ object: "account_link", created, expires_at, url }`, a single-use
 *   URL https://docs.stripe.com/api/account_links/create
 * - Idempotent requests: `Idempotency-Key`; Stripe answers the first result again for the same key
 *   (for at least 24 hours) https://docs.stripe.com/api/idempotent_requests
 * - Errors: a 4xx with `{ error: { type, code, message } }` https://docs.stripe.com/api/errors
 * Not knowable from the documentation: which countries' partners Stripe lets onboard under the
 * merchant's platform (cross-border "recipient" accounts need `tos_acceptance[service_agreement]`);
 * the service requests the plain Express account and says what Stripe answers.
 */

/** Stripe refused (4xx) or did not answer (timeout, 5xx); the message says which, for the 502. */
export class StripeFailed extends Error {}

const form = (fields: Record<string, string>) => new URLSearchParams(fields).toString();

export class StripeConnectClient {
  constructor(
    private readonly base: string,
    private readonly secretKey: string,
  ) {}

  /** An Express connected account able to receive transfers; the same one again for the same key. */
  async createExpressAccount(input: {
    email: string;
    idempotencyKey: string;
    metadata: Record<string, string>;
  }): Promise<string> {
    const fields: Record<string, string> = {
      type: 'express',
      email: input.email,
      'capabilities[transfers][requested]': 'true',
    };
    for (const [key, value] of Object.entries(input.metadata)) fields[`metadata[${key}]`] = value;
    const answer = await this.post('/v1/accounts', fields, { 'Idempotency-Key': input.idempotencyKey });
    if (typeof answer?.id !== 'string' || !answer.id.startsWith('acct_'))
      throw new StripeFailed('Stripe answered no account id');
    return answer.id;
  }

  async createOnboardingLink(
    account: string,
    urls: { refresh: string; return: string },
  ): Promise<{ url: string; expires_at: Date }> {
    const answer = await this.post('/v1/account_links', {
      account,
      type: 'account_onboarding',
      refresh_url: urls.refresh,
      return_url: urls.return,
    });
    if (typeof answer?.url !== 'string' || typeof answer?.expires_at !== 'number')
      throw new StripeFailed('Stripe answered no account link');
    return { url: answer.url, expires_at: new Date(answer.expires_at * 1000) };
  }

  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- Stripe's JSON answer, checked field by field by the callers
  private async post(path: string, fields: Record<string, string>, headers: Record<string, string> = {}): Promise<any> {
    // eslint-disable-next-line @typescript-eslint/no-explicit-any -- Stripe's JSON answer, checked field by field by the callers
    let answer: { status: number; body: any };
    try {
      answer = await call(joinUrl(this.base, path), {
        method: 'POST',
        headers: {
          authorization: `Bearer ${this.secretKey}`,
          'content-type': 'application/x-www-form-urlencoded',
          ...headers,
        },
        body: form(fields),
      });
    } catch (err) {
      if (err instanceof RailUnreachable) throw new StripeFailed(`Stripe did not answer (${err.message}); try again`);
      throw err;
    }
    if (answer.status !== 200)
      throw new StripeFailed(
        `Stripe refused (${answer.status}): ${String(answer.body?.error?.message ?? answer.body?.error?.code ?? 'no message').slice(0, 300)}`,
      );
    return answer.body;
  }
}
