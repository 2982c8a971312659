import { useState } from 'react';
import type { Partner, PartnerPayoutSettings, PartnerTaxForm, TaxFormKind } from '@affiliate-attribution/contract';
import { Field, FormError, Status, date, useLoad, useSubmit } from '../ui';
import { api, orThrow } from './portal-api';

/**
 * Where and how the partner is paid: their tax form (a W-9, W-8BEN or W-8BEN-E, uploaded here and
 * reviewed by the merchant) and their payout e-mail. What holds their payouts (a program that
 * requires an accepted form) comes from the service, with what to do about it.
 */
export function usePartnerTaxForm(partner: Partner) {
  return useLoad(async () => orThrow(await api.partner.taxForm()), [partner.email]);
}
type TaxFormLoad = ReturnType<typeof usePartnerTaxForm>;

/**
 * One place for the payout e-mail: with the payout method when the merchant pays by PayPal, Wise or
 * Stripe (the e-mail is the PayPal or Wise account's, or where a manual payment goes), else on its own.
 */
export function PayoutSettings({
  partner,
  taxForm,
  onChanged,
}: {
  partner: Partner;
  taxForm: TaxFormLoad;
  onChanged: () => void;
}) {
  const settings = useLoad(async () => orThrow(await api.partner.payoutSettings()), [partner.email]);
  const withMethods = (settings.data?.available_methods.length ?? 0) >= 2;
  return (
    <>
      {taxForm.data && (
        <TaxFormCard view={taxForm.data} merchant={partner.organization.name} onSubmitted={taxForm.reload} />
      )}
      <FormError error={taxForm.error} />
      {settings.data && withMethods && (
        <PayoutMethodCard current={settings.data} onSaved={() => (settings.reload(), onChanged())} />
      )}
      {settings.data && !withMethods && <PayoutEmail partner={partner} onSaved={onChanged} />}
      <FormError error={settings.error} />
    </>
  );
}

/** The holds at the top of the page: the partner sees at once that (and why) they are not paid. */
export function PayoutHolds({ taxForm }: { taxForm: TaxFormLoad }) {
  const holds = taxForm.data?.holds ?? [];
  if (holds.length === 0) return null;
  return (
    <div className="notice notice-warn" role="status" data-testid="payout-holds">
      <strong>Your payouts are held.</strong>
      <ul>
        {holds.map((h) => (
          <li key={h.program_id}>{h.message}</li>
        ))}
      </ul>
      <a href="#tax-form-title">Go to your tax form</a>
    </div>
  );
}

const KINDS: { value: TaxFormKind; label: string }[] = [
  { value: 'w9', label: 'W-9 (US person or US company)' },
  { value: 'w8ben', label: 'W-8BEN (individual outside the US)' },
  { value: 'w8bene', label: 'W-8BEN-E (company outside the US)' },
];
const KIND_NAMES: Record<TaxFormKind, string> = { w9: 'W-9', w8ben: 'W-8BEN', w8bene: 'W-8BEN-E' };
const MAX_BYTES = 10 * 1024 * 1024;

/** The file, base64 (what the upload route takes in its JSON body). */
function base64Of(file: File): Promise<string> {
  return new Promise((resolve, reject) => {
    const reader = new FileReader();
    reader.onload = () => resolve((reader.result as string).replace(/^data:[^,]*,/, ''));
    reader.onerror = () => reject(reader.error ?? new Error('The file could not be read'));
    reader.readAsDataURL(file);
  });
}

function TaxFormCard({
  view,
  merchant,
  onSubmitted,
}: {
  view: PartnerTaxForm;
  merchant: string;
  onSubmitted: () => void;
}) {
  const form = view.tax_form;
  const [kind, setKind] = useState<TaxFormKind>(form.kind ?? 'w9');
  const [file, setFile] = useState<File>();
  const [sent, setSent] = useState(false);
  const upload = useSubmit(
    async () => {
      if (!file) throw new Error('content_base64: choose the signed form (PDF, PNG or JPEG)');
      // Checked here too, so that a large file is not read and sent only to be refused.
      if (file.size > MAX_BYTES) throw new Error('content_base64: the document is larger than 10 MiB');
      return orThrow(
        await api.partner.submitTaxForm({ body: { kind, file_name: file.name, content_base64: await base64Of(file) } }),
      );
    },
    () => {
      setSent(true);
      setFile(undefined);
      onSubmitted();
    },
  );
  return (
    <section className="card" aria-labelledby="tax-form-title" data-testid="tax-form">
      <h2 id="tax-form-title">Tax form</h2>
      <p>
        {form.status === 'missing' ? (
          <>No tax form on file.</>
        ) : (
          <>
            Your {KIND_NAMES[form.kind!]} sent on {date(form.submitted_at)}: <Status value={form.status} />
          </>
        )}
      </p>
      {form.status === 'submitted' && (
        <p className="muted">The merchant reviews it; you are told here when they accept or reject it.</p>
      )}
      {form.status === 'rejected' && (
        <p className="notice notice-danger" data-testid="rejection-reason">
          The merchant rejected it: <strong>{form.rejection_reason}</strong>. Upload a corrected form below.
        </p>
      )}
      {/* What holds the payouts is said at the top of the page (PayoutHolds); here, only that nothing does. */}
      {view.required && view.holds.length === 0 && (
        <p className="muted">Your programs that require a tax form pay you.</p>
      )}
      {!view.required && form.status === 'missing' && (
        <p className="muted small">
          None of your programs requires one yet; the merchant may ask for it before paying you.
        </p>
      )}
      {/* Without encrypted storage the service takes no tax document: no form to fill in vain. */}
      {!view.uploads_accepted && (
        <p className="notice notice-warn" data-testid="tax-form-uploads-off">
          {merchant} does not accept tax forms online yet: they must first set up encrypted storage for documents. Send
          them your form another way, or upload it here once they have.
        </p>
      )}
      {view.uploads_accepted && (
        <form className="stacked-form" onSubmit={upload.submit} noValidate aria-label="Upload a tax form">
          <Field label="Which form" name="kind">
            {(attrs) => (
              <select {...attrs} value={kind} onChange={(e) => setKind(e.target.value as TaxFormKind)}>
                {KINDS.map((k) => (
                  <option key={k.value} value={k.value}>
                    {k.label}
                  </option>
                ))}
              </select>
            )}
          </Field>
          <Field label="Signed form (PDF, PNG or JPEG, at most 10 MB)" name="content_base64" error={upload.error}>
            {(attrs) => (
              <input
                {...attrs}
                type="file"
                accept="application/pdf,image/png,image/jpeg"
                onChange={(e) => (setSent(false), setFile(e.target.files?.[0]))}
              />
            )}
          </Field>
          {form.status === 'accepted' && (
            <p className="muted small">
              Uploading a new form replaces the accepted one: payouts that require a form wait until the merchant
              accepts the new one.
            </p>
          )}
          <button type="submit" disabled={upload.busy}>
            {upload.busy ? 'Uploading…' : form.status === 'missing' ? 'Upload' : 'Upload a new form'}
          </button>
        </form>
      )}
      <FormError error={upload.error} fields={['content_base64', 'kind', 'file_name']} />
      {sent && <p role="status">Sent: the merchant reviews your form. It is stored encrypted.</p>}
    </section>
  );
}

const METHOD_LABELS: Record<PartnerPayoutSettings['payout_method'], string> = {
  manual: 'The merchant pays me by hand (to my payout e-mail)',
  paypal: 'PayPal',
  wise: 'Wise',
  stripe: 'Stripe (a bank account through Stripe)',
};

/**
 * The partner's payout method, among those the merchant pays by (shown only when the merchant set
 * up PayPal, Wise or Stripe): PayPal and Wise pay to an e-mail, Stripe to the connected account that
 * "Connect with Stripe" creates (Stripe's own onboarding pages, then back here).
 */
const EMAIL_HINTS: Record<Exclude<PartnerPayoutSettings['payout_method'], 'stripe'>, string> = {
  paypal: 'The e-mail of your PayPal account: payouts are sent there.',
  wise: 'The e-mail of your Wise account: payouts are sent there, in your name.',
  manual: 'Where the merchant pays you by hand (PayPal or Wise).',
};

function PayoutMethodCard({ current, onSaved }: { current: PartnerPayoutSettings; onSaved: () => void }) {
  const back = new URLSearchParams(location.search).get('stripe_onboarding');
  const [method, setMethod] = useState<PartnerPayoutSettings['payout_method']>();
  const [email, setEmail] = useState<string>();
  const [saved, setSaved] = useState(false);
  const chosen = method ?? (back === 'return' && current.stripe_connected ? 'stripe' : current.payout_method);
  const payoutEmail = (email ?? current.payout_email).trim();
  const save = useSubmit(
    async () =>
      orThrow(
        await api.partner.updatePayoutSettings({
          body: { payout_method: chosen, ...(chosen !== 'stripe' && payoutEmail ? { payout_email: payoutEmail } : {}) },
        }),
      ),
    () => {
      setSaved(true);
      setEmail(undefined);
      onSaved();
    },
  );
  const connect = useSubmit(
    async () => orThrow(await api.partner.stripeOnboarding({ body: {} })),
    (link) => location.assign(link.url),
  );
  return (
    <section className="card" aria-labelledby="method-title" data-testid="payout-method">
      <h2 id="method-title">How you are paid</h2>
      {back === 'return' && (
        <p role="status">
          Back from Stripe
          {current.stripe_connected ? ': your account is connected. Choose Stripe and save to be paid there.' : '.'}
        </p>
      )}
      {back === 'refresh' && <p role="status">That Stripe link expired: connect again for a new one.</p>}
      <form className="stacked-form" onSubmit={save.submit} noValidate aria-label="How you are paid">
        <fieldset className="choices">
          <legend>Payout method</legend>
          {current.available_methods.map((m) => (
            <label key={m} className="choice">
              <input
                type="radio"
                name="payout_method"
                value={m}
                checked={chosen === m}
                onChange={() => (setSaved(false), setMethod(m))}
              />{' '}
              {METHOD_LABELS[m]}
              {m === 'stripe' && current.stripe_connected && <small className="muted"> · connected</small>}
            </label>
          ))}
        </fieldset>
        {chosen !== 'stripe' && (
          <Field
            label="Payout e-mail"
            name="payout_email"
            type="email"
            value={email ?? current.payout_email}
            onChange={(v) => (setSaved(false), setEmail(v))}
            error={save.error}
            hint={EMAIL_HINTS[chosen]}
          />
        )}
        {chosen === 'stripe' && (
          <div className="actions">
            <button
              type="button"
              className={current.stripe_connected ? 'secondary' : ''}
              disabled={connect.busy}
              onClick={() => void connect.submit()}
            >
              {current.stripe_connected ? 'Update my Stripe details' : 'Connect with Stripe'}
            </button>
            {!current.stripe_connected && (
              <small className="muted">Stripe asks for your details and bank account, then brings you back here.</small>
            )}
          </div>
        )}
        <FormError error={connect.error} />
        {!(chosen === 'stripe' && !current.stripe_connected) && (
          <button type="submit" disabled={save.busy}>
            Save
          </button>
        )}
      </form>
      <FormError error={save.error} fields={['payout_email']} />
      {saved && (
        <p role="status">
          Saved: you are paid by {METHOD_LABELS[current.payout_method]}
          {current.payout_method !== 'stripe' && ` at ${current.payout_email}`}.
        </p>
      )}
    </section>
  );
}

function PayoutEmail({ partner, onSaved }: { partner: Partner; onSaved: () => void }) {
  const [value, setValue] = useState(partner.payout_email);
  const [saved, setSaved] = useState(false);
  const save = useSubmit(
    async () => orThrow(await api.partner.updateMe({ body: { payout_email: value.trim() } })),
    () => {
      setSaved(true);
      onSaved();
    },
  );
  return (
    <section className="card" aria-labelledby="settings-title">
      <h2 id="settings-title">How you are paid</h2>
      <form className="inline-form" onSubmit={save.submit} noValidate aria-label="How you are paid">
        <Field
          label="Payout e-mail"
          name="payout_email"
          type="email"
          value={value}
          onChange={(v) => (setSaved(false), setValue(v))}
          error={save.error}
          hint="Your PayPal or Wise e-mail: the merchant pays you there."
        />
        <button type="submit" disabled={save.busy}>
          Save
        </button>
      </form>
      <FormError error={save.error} fields={['payout_email']} />
      {saved && <p role="status">Saved: your next payouts go to {partner.payout_email}.</p>}
    </section>
  );
}
