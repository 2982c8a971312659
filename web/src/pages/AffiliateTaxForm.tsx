import { useState } from 'react';
import type { Affiliate, TaxFormKind } from '@affiliate-attribution/contract';
import { api, data } from '../api';
import { useSession } from '../App';
import { Field, FormError, Status, date, useLoad, useSubmit } from '../ui';

const KIND_NAMES: Record<TaxFormKind, string> = { w9: 'W-9', w8ben: 'W-8BEN', w8bene: 'W-8BEN-E' };

/**
 * The partner's tax form on the affiliate page: its status, and what it holds (the service says
 * "Payout held: tax form <status>" when the program requires an accepted form). An owner views the
 * document and accepts or rejects it (it carries a taxpayer id: owner-only, like the API routes).
 */
export function AffiliateTaxForm({ affiliate, onChanged }: { affiliate: Affiliate; onChanged: () => void }) {
  const owner = useSession().session.user.role === 'owner';
  const view = useLoad(
    async () => data(await api.taxForms.get({ params: { id: affiliate.id } })),
    [affiliate.id, affiliate.tax_form.status, affiliate.tax_form.submitted_at],
  );
  const [rejecting, setRejecting] = useState(false);
  const [reason, setReason] = useState('');
  const done = () => {
    setRejecting(false);
    view.reload();
    onChanged();
  };
  const accept = useSubmit(
    async () => data(await api.taxFormReview.accept({ params: { id: affiliate.id }, body: {} })),
    done,
  );
  const reject = useSubmit(
    async () => data(await api.taxFormReview.reject({ params: { id: affiliate.id }, body: { reason: reason.trim() } })),
    done,
  );
  const form = view.data?.tax_form ?? affiliate.tax_form;
  const hold = view.data?.payout_hold;
  return (
    <div data-testid="tax-form">
      {form.status === 'missing' ? (
        <span>Not submitted</span>
      ) : (
        <>
          {KIND_NAMES[form.kind!]} <Status value={form.status} />{' '}
          <small className="muted">sent {date(form.submitted_at)}</small>
        </>
      )}
      {form.status === 'rejected' && form.rejection_reason && (
        <p className="small muted">Rejected: {form.rejection_reason}</p>
      )}
      {hold && (
        <p className="hold-note" data-testid="payout-hold">
          {hold.message}
        </p>
      )}
      {view.data && !view.data.uploads_accepted && (
        <p className="small notice notice-warn" data-testid="tax-form-uploads-off">
          Partners cannot upload tax forms yet: the service stores them only encrypted, and has no encryption key. Set{' '}
          <code>ENCRYPTION_KEY</code> (32 random bytes, e.g. <code>openssl rand -hex 32</code>) in the service&apos;s
          environment and restart it; the portal then offers the upload.
        </p>
      )}
      {owner && form.status !== 'missing' && !rejecting && (
        <div className="actions">
          <a className="button secondary small" href={`/api/affiliates/${affiliate.id}/tax-form/document`} download>
            Download document
          </a>
          {form.status !== 'accepted' && (
            <button type="button" className="small" disabled={accept.busy} onClick={() => void accept.submit()}>
              Accept
            </button>
          )}
          {form.status !== 'rejected' && (
            <button
              type="button"
              className="secondary small"
              onClick={() => (setReason(''), reject.setError(undefined), setRejecting(true))}
            >
              Reject…
            </button>
          )}
        </div>
      )}
      {rejecting && (
        <form className="inline-form" onSubmit={reject.submit} noValidate aria-label="Reject the tax form">
          <Field
            label="Why (the partner reads it)"
            name="reason"
            value={reason}
            onChange={setReason}
            error={reject.error}
            placeholder="The form is not signed"
          />
          <button type="submit" className="small danger" disabled={reject.busy || !reason.trim()}>
            Reject
          </button>
          <button type="button" className="secondary small" onClick={() => setRejecting(false)}>
            Cancel
          </button>
        </form>
      )}
      {!owner && form.status === 'submitted' && <p className="small muted">An owner of the organization reviews it.</p>}
      <FormError error={accept.error ?? view.error} />
      <FormError error={reject.error} fields={['reason']} />
    </div>
  );
}
