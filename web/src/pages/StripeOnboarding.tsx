import { useState } from 'react';
import type { Affiliate, StripeOnboardingLink } from '@affiliate-attribution/contract';
import { api, data } from '../api';
import { CopyButton, FormError, dateTime, useSubmit } from '../ui';

/**
 * Stripe Connect onboarding for one affiliate: the service creates the partner's Express account on
 * the merchant's platform (once) and answers Stripe's single-use onboarding link, which the merchant
 * sends to the partner (partners also do it themselves in the portal: "Connect with Stripe").
 */
export function StripeOnboarding({ affiliate, onCreated }: { affiliate: Affiliate; onCreated: () => void }) {
  const [link, setLink] = useState<StripeOnboardingLink>();
  const create = useSubmit(
    async () => data(await api.stripeOnboarding.create({ params: { id: affiliate.id }, body: {} })),
    (l) => {
      setLink(l);
      if (!affiliate.stripe_account_id) onCreated();
    },
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
