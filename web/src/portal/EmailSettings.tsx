import { useState } from 'react';
import type { EmailNotifications, Partner } from '@affiliate-attribution/contract';
import { FormError, useSubmit } from '../ui';
import { api, orThrow } from './portal-api';

const CHOICES: { key: keyof EmailNotifications; label: string }[] = [
  { key: 'commissions', label: 'When I earn a commission' },
  { key: 'payouts', label: 'When a payout is sent to me' },
];

/**
 * The partner's e-mail settings (PATCH /partner/api/me `email_notifications`): each e-mail on by
 * default, saved as soon as it is ticked or unticked, for every program with this merchant.
 */
export function EmailSettings({ partner, onSaved }: { partner: Partner; onSaved: () => void }) {
  const [saved, setSaved] = useState<string>();
  // Shown as ticked at once; the service's answer (or the partner's settings again, on an error) follows.
  const [shown, setShown] = useState(partner.email_notifications);
  const save = useSubmit(
    async (change?: Partial<EmailNotifications>) => {
      try {
        return orThrow(await api.partner.updateMe({ body: { email_notifications: change ?? {} } }));
      } catch (err) {
        setShown(partner.email_notifications);
        throw err;
      }
    },
    (result) => {
      const { commissions, payouts } = result.partner.email_notifications;
      setShown(result.partner.email_notifications);
      setSaved(
        commissions || payouts
          ? `Saved: you get an e-mail ${[commissions && 'for each commission', payouts && 'for each payout'].filter(Boolean).join(' and ')}.`
          : `Saved: ${partner.organization.name} sends you no e-mail of commissions or payouts.`,
      );
      onSaved();
    },
  );
  return (
    <section className="card email-settings" aria-labelledby="email-settings-title" data-testid="email-settings">
      <h2 id="email-settings-title">E-mails from {partner.organization.name}</h2>
      <fieldset disabled={save.busy}>
        <legend className="muted">E-mail me at {partner.email}:</legend>
        {CHOICES.map(({ key, label }) => (
          <label key={key} className="check-line">
            <input
              type="checkbox"
              name={key}
              checked={shown[key]}
              onChange={(e) => {
                setSaved(undefined);
                setShown((current) => ({ ...current, [key]: e.target.checked }));
                void save.submit({ [key]: e.target.checked });
              }}
            />
            {label}
          </label>
        ))}
      </fieldset>
      <FormError error={save.error} />
      {saved && <p role="status">{saved}</p>}
    </section>
  );
}
