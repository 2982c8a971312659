import { useEffect, useState } from 'react';
import { Link, useParams } from 'react-router';
import type { JoinPage, PartnerProgram } from '@affiliate-attribution/contract';
import { Field, FormError, Loading, money, useLoad, useSubmit } from '../ui';
import { api, orThrow } from './portal-api';
import { PortalCard } from './Portal';

const SLUG = /^[a-z0-9-]{2,64}$/;

export const commissionText = (p: PartnerProgram): string =>
  p.commission_type === 'percent'
    ? `${p.commission_value} % of every sale`
    : `${money(p.commission_value, p.currency)} per paid conversion`;

/** Availability of the slug being typed, asked of the service 300 ms after the last keystroke. */
function useSlugCheck(organizationId: string, slug: string): 'idle' | 'checking' | 'available' | 'taken' | 'invalid' {
  const [state, setState] = useState<'idle' | 'checking' | 'available' | 'taken' | 'invalid'>('idle');
  useEffect(() => {
    if (!slug) return setState('idle');
    if (!SLUG.test(slug)) return setState('invalid');
    setState('checking');
    let live = true;
    const timer = setTimeout(async () => {
      try {
        const { available } = orThrow(await api.partnerPublic.slugAvailability({ params: { organizationId, slug } }));
        if (live) setState(available ? 'available' : 'taken');
      } catch {
        if (live) setState('idle');
      }
    }, 300);
    return () => {
      live = false;
      clearTimeout(timer);
    };
  }, [organizationId, slug]);
  return state;
}

export function Join() {
  const { organizationId = '', programId = '' } = useParams();
  const page = useLoad(
    async () => orThrow(await api.partnerPublic.joinPage({ params: { organizationId, programId } })),
    [organizationId, programId],
  );
  useEffect(() => {
    if (page.data) document.title = `Join ${page.data.organization.name}'s partner program`;
  }, [page.data]);
  if (page.loading) return <Loading />;
  if (!page.data)
    return (
      <PortalCard title="Program not found">
        <FormError error={page.error} />
      </PortalCard>
    );
  return <JoinForm page={page.data} />;
}

function JoinForm({ page }: { page: JoinPage }) {
  const { organization, program } = page;
  const hasTerms = !!program.terms?.trim();
  const [draft, setDraft] = useState({ name: '', email: '', slug: '', payout_email: '', accept: false });
  const set = (k: 'name' | 'email' | 'slug' | 'payout_email') => (v: string) =>
    setDraft((d) => ({ ...d, [k]: k === 'slug' ? v.toLowerCase() : v }));
  const slugState = useSlugCheck(organization.id, draft.slug.trim());
  const [done, setDone] = useState<'active' | 'pending'>();
  const apply = useSubmit(
    async () =>
      orThrow(
        await api.partnerPublic.apply({
          params: { organizationId: organization.id, programId: program.id },
          body: {
            name: draft.name.trim(),
            email: draft.email.trim(),
            slug: draft.slug.trim(),
            payout_email: draft.payout_email.trim() || undefined,
            accept_terms: hasTerms ? (draft.accept as true) : undefined,
          },
        }),
      ).application,
    (application) => setDone(application.status === 'active' ? 'active' : 'pending'),
  );
  if (program.signup === 'closed')
    return (
      <PortalCard brand={organization.name} title={program.name}>
        <p role="status">This program takes no applications at the moment.</p>
        <p>
          Already a partner? <Link to={`/${organization.id}/sign-in`}>Sign in</Link>
        </p>
      </PortalCard>
    );
  if (done)
    return (
      <PortalCard brand={organization.name} title={done === 'active' ? "You're in" : 'Application sent'}>
        <p role="status">
          {done === 'active'
            ? 'Your referral link works now. We e-mailed you a link to sign in to your partner portal.'
            : `${organization.name} reviews applications: your link starts working once you are approved. We e-mailed you a link to sign in to your partner portal meanwhile.`}
        </p>
      </PortalCard>
    );
  const e = apply.error;
  return (
    <PortalCard brand={organization.name} title={`Join ${program.name}`}>
      <dl className="facts">
        <dt>You earn</dt>
        <dd>{commissionText(program)}</dd>
        <dt>Cookie window</dt>
        <dd>{program.click_window_days} days after a click</dd>
        <dt>Approval</dt>
        <dd>{program.hold_days} days after each sale (refund period)</dd>
        <dt>Minimum payout</dt>
        <dd>{money(program.minimum_payout, program.currency)}</dd>
      </dl>
      {program.signup === 'approval' && (
        <p className="muted">{organization.name} approves each partner before their link works.</p>
      )}
      <form onSubmit={apply.submit} noValidate aria-label="Apply">
        <Field
          label="Your name"
          name="name"
          autoComplete="name"
          value={draft.name}
          onChange={set('name')}
          error={e}
          required
        />
        <Field
          label="E-mail"
          name="email"
          type="email"
          autoComplete="email"
          value={draft.email}
          onChange={set('email')}
          error={e}
          required
          hint="Your sign-in links go there"
        />
        <Field
          label="Referral slug"
          name="slug"
          value={draft.slug}
          onChange={set('slug')}
          error={e}
          required
          hint="Your link ends with ?ref=<slug>: lowercase letters, digits and -"
        />
        <p
          className={`slug-status ${slugState === 'available' ? 'ok' : slugState === 'taken' || slugState === 'invalid' ? 'taken' : ''}`}
          aria-live="polite"
        >
          {slugState === 'checking' && 'Checking…'}
          {slugState === 'available' && `✓ "${draft.slug.trim()}" is available`}
          {slugState === 'taken' && `"${draft.slug.trim()}" is taken: try another`}
          {slugState === 'invalid' && '2 to 64 lowercase letters, digits or "-"'}
        </p>
        <Field
          label="Payout e-mail (PayPal or Wise)"
          name="payout_email"
          type="email"
          value={draft.payout_email}
          onChange={set('payout_email')}
          error={e}
          hint="Empty: your e-mail"
        />
        {hasTerms && (
          <>
            <h2 id="terms-title">Program terms</h2>
            <div className="terms" role="region" aria-labelledby="terms-title" tabIndex={0}>
              {program.terms}
            </div>
            <div className="field checkbox">
              <label>
                <input
                  type="checkbox"
                  name="accept_terms"
                  checked={draft.accept}
                  onChange={(ev) => setDraft((d) => ({ ...d, accept: ev.target.checked }))}
                />{' '}
                I accept the program&apos;s terms
              </label>
              {e?.field === 'accept_terms' && (
                <small className="field-error" role="alert">
                  {e.detail}
                </small>
              )}
            </div>
          </>
        )}
        <FormError error={e} fields={['name', 'email', 'slug', 'payout_email', 'accept_terms']} />
        <div className="actions">
          <button type="submit" disabled={apply.busy}>
            {program.signup === 'open' ? 'Join the program' : 'Apply'}
          </button>
          <Link to={`/${organization.id}/sign-in`}>Already a partner? Sign in</Link>
        </div>
      </form>
    </PortalCard>
  );
}
