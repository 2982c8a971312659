import { useState } from 'react';
import { Link } from 'react-router';
import type { Affiliate, StripeOnboardingLink } from '@affiliate-attribution/contract';
import { api, data } from '../api';
import { useSession } from '../App';
import { CopyButton, FormError, dateTime, useLoad, useSubmit } from '../ui';

/**
 * Whether the organization's Stripe Connect rail is set up: true, false, or undefined while unknown
 * (loading, or a member, who may not read the integrations: the service then says it on click).
 */
function useStripeConnectSetUp(): boolean | undefined {
  const owner = useSession().session.user.role === 'owner';
  const list = useLoad(async () => (owner ? data(await api.integrations.list()).integrations : undefined), [owner]);
  return list.data?.find((i) => i.provider === 'stripe_connect')?.configured;
}

/**
 * Stripe Connect onboarding for one affiliate: the service creates the partner's Express account on
 * the merchant's platform (once) and answers Stripe's single-use onboarding link, which the merchant
 * sends to the partner (partners also do it themselves in the portal: "Connect with Stripe").
 */
export function StripeOnboarding({ affiliate, onCreated }: { affiliate: Affiliate; onCreated: () => void }) {
  const setUp = useStripeConnectSetUp();
  const [link, setLink] = useState<StripeOnboardingLink>();
  const create = useSubmit(
    async () => data(await api.stripeOnboarding.create({ params: { id: affiliate.id }, body: {} })),
    (l) => {
      setLink(l);
      if (!affiliate.stripe_account_id) onCreated();
    },
  );
  // Without the rail, "Connect with Stripe" could only fail: say what to set up instead.
  if (setUp === false && !affiliate.stripe_account_id)
    return (
      <p className="small muted" data-testid="stripe-connect-not-set-up">
        Stripe Connect is not set up. To pay partners through Stripe, add your Stripe platform&apos;s secret key (
        <code>sk_…</code> or a restricted <code>rk_…</code> key with Transfers write) under Payout rails on the{' '}
        <Link to="/integrations">Integrations</Link> page.
      </p>
    );
  return (
    <div data-testid="stripe-onboarding">
      {affiliate.stripe_account_id ? (
        <code>{affiliate.stripe_account_id}</code>
      ) : (
        <span className="muted">No connected account yet</span>
      )}{' '}
      <button type="button" className="secondary small" disabled={create.busy} onClick={() => void create.submit()}>
        {affiliate.stripe_account_id ? 'New onboarding link' : 'Connect with Stripe'}
      </button>
      {link && (
        <p className="actions">
          <code className="break" data-testid="onboarding-link">
            {link.url}
          </code>{' '}
          <CopyButton text={link.url} label="Copy link" />
          <small className="muted">Send it to the partner: it works once, until {dateTime(link.expires_at)}.</small>
        </p>
      )}
      <FormError error={create.error} />
    </div>
  );
}
