import { useEffect, useRef, useState } from 'react';
import { Link, useNavigate, useParams, useSearchParams } from 'react-router';
import { Field, FormError, useLoad, useSubmit } from '../ui';
import { api, orThrow } from './portal-api';
import { PortalCard } from './Portal';

/** The merchant a portal's public page names (GET /partner/api/organizations/{id}); undefined while loading or unknown. */
export function usePortalMerchant(organizationId: string) {
  return useLoad(
    async () => orThrow(await api.partnerPublic.portalOrganization({ params: { organizationId } })).organization,
    [organizationId],
  );
}

/** "E-mail me a sign-in link": the answer is the same whoever asks (no one learns who is a partner). */
export function RequestLink({ notice }: { notice?: string }) {
  const { organizationId = '' } = useParams();
  const merchant = usePortalMerchant(organizationId);
  const merchantName = merchant.data?.name;
  const [email, setEmail] = useState('');
  const [sent, setSent] = useState(false);
  const request = useSubmit(
    async () =>
      orThrow(await api.partnerPublic.requestSignInLink({ params: { organizationId }, body: { email: email.trim() } })),
    () => setSent(true),
  );
  useEffect(() => {
    document.title = merchantName ? `Sign in · ${merchantName}'s partner portal` : 'Sign in · Partner portal';
  }, [merchantName]);
  if (merchant.error?.status === 404)
    return (
      <PortalCard title="Partner portal not found">
        <p>This address is not a merchant's partner portal: open the link your merchant gave you.</p>
      </PortalCard>
    );
  return (
    <PortalCard brand={merchantName} title={merchantName ? `Sign in to ${merchantName}'s partner portal` : 'Sign in'}>
      {notice && <p className="muted">{notice}</p>}
      <p>
        Your referral links, the customers you referred, your commissions and payouts with{' '}
        {merchantName ?? 'this merchant'}.
      </p>
      <form onSubmit={request.submit} noValidate>
        <Field
          label="Your e-mail"
          name="email"
          type="email"
          autoComplete="email"
          value={email}
          onChange={setEmail}
          error={request.error}
          required
        />
        <FormError error={request.error} fields={['email']} />
        {sent && (
          <p role="status" className="notice-text">
            If this address is a partner's, a sign-in link is on its way: it works once, for 15 minutes.
          </p>
        )}
        <div className="actions">
          <button type="submit" disabled={request.busy || !email}>
            E-mail me a sign-in link
          </button>
        </div>
      </form>
    </PortalCard>
  );
}

/**
 * The e-mailed link's page. Signing in takes a click: mail scanners that open links (even running
 * their scripts) must not spend the one-time token.
 */
export function UseLink() {
  const { organizationId = '' } = useParams();
  const merchantName = usePortalMerchant(organizationId).data?.name;
  const [params] = useSearchParams();
  const navigate = useNavigate();
  const signIn = useSubmit(
    async () =>
      orThrow(
        await api.partnerPublic.signIn({ body: { organization_id: organizationId, token: params.get('token') ?? '' } }),
      ),
    () => navigate(`/${organizationId}`, { replace: true }),
  );
  useEffect(() => {
    document.title = 'Sign in · Partner portal';
  }, []);
  // A link that failed (used, expired) is a dead end for this page: it says so and offers a new link, not a second try.
  if (signIn.error)
    return (
      <PortalCard brand={merchantName} title="This sign-in link no longer works">
        <FormError error={signIn.error} />
        <div className="actions">
          <Link className="button" to={`/${organizationId}/sign-in`}>
            Ask for a new link
          </Link>
        </div>
      </PortalCard>
    );
  // The same words for a first sign-in and a return: the link does not tell which it is.
  return (
    <PortalCard brand={merchantName} title="Sign in to your partner portal">
      <p>
        Continue to your partner portal with {merchantName ?? 'this merchant'}: your links, your customers, what you
        earned and when you are paid.
      </p>
      <div className="actions">
        <button type="button" onClick={() => void signIn.submit()} disabled={signIn.busy}>
          Continue to the portal
        </button>
      </div>
    </PortalCard>
  );
}

/**
 * The merchant's preview of the portal as a test partner (POST /api/affiliates/{id}/portal-preview
 * answered this page's link): it signs in at once, as the link is never e-mailed (no mail scanner
 * opens it), then shows the partner's portal, with the preview banner.
 */
export function Preview() {
  const { organizationId = '' } = useParams();
  const [params] = useSearchParams();
  const navigate = useNavigate();
  const started = useRef(false);
  const signIn = useSubmit(
    async () =>
      orThrow(
        await api.partnerPublic.signIn({ body: { organization_id: organizationId, token: params.get('token') ?? '' } }),
      ),
    () => navigate(`/${organizationId}`, { replace: true }),
  );
  useEffect(() => {
    document.title = 'Preview · Partner portal';
    // Once: the link works once (React may run an effect twice in development).
    if (started.current) return;
    started.current = true;
    void signIn.submit();
    // eslint-disable-next-line react-hooks/exhaustive-deps -- signs in once, on mount: the link is single-use (the `started` ref guards the double mount)
  }, []);
  if (signIn.error)
    return (
      <PortalCard title="This preview link no longer works">
        <FormError error={signIn.error} />
        <p>
          A preview link works once, for 5 minutes: open the preview again from the affiliate's page in the dashboard
          (in test mode).
        </p>
      </PortalCard>
    );
  return (
    <PortalCard title="Opening the preview…">
      <p role="status">Signing in as the test partner…</p>
    </PortalCard>
  );
}
