import { useEffect, useState } from 'react';
import { useNavigate, useParams } from 'react-router';
import type { Partner, PartnerMembership } from '@affiliate-attribution/contract';
import { CopyButton, Empty, Field, FormError, Loading, Status, date, money, useLoad, useSubmit } from '../ui';
import { DataTable, usePagedList } from '../table';
import { api, orThrow } from './portal-api';
import { commissionText } from './Join';
import { RequestLink } from './SignIn';
import { PayoutHolds, PayoutSettings, usePartnerTaxForm } from './PayoutSettings';
import { Earnings } from './PartnerEarnings';
import { EmailSettings } from './EmailSettings';

const DAY_MS = 86_400_000;

/** The signed-in partner's portal for one merchant; without a session for it, the sign-in form. */
export function PartnerHome() {
  const { organizationId = '' } = useParams();
  // The session route answers null when signed out (GET /me would answer 401, which the browser logs as an error).
  const me = useLoad(async () => orThrow(await api.partnerPublic.session()).partner, [organizationId]);
  if (me.loading && me.data === undefined) return <Loading />;
  if (!me.data) return <RequestLink />;
  if (me.data.organization.id !== organizationId)
    return (
      <RequestLink
        notice={`You are signed in to ${me.data.organization.name}'s partner portal: sign in again for this merchant.`}
      />
    );
  return <Signed partner={me.data} onChanged={me.reload} />;
}

function Signed({ partner, onChanged }: { partner: Partner; onChanged: () => void }) {
  const navigate = useNavigate();
  const [programId, setProgramId] = useState(partner.memberships[0]?.program.id ?? '');
  const membership = partner.memberships.find((m) => m.program.id === programId) ?? partner.memberships[0];
  const taxForm = usePartnerTaxForm(partner);
  useEffect(() => {
    document.title = `${partner.organization.name} · Partner portal`;
  }, [partner.organization.name]);
  // The merchant's accent colour (their branding) for the header, buttons and links.
  useEffect(() => {
    const root = document.documentElement.style;
    root.setProperty('--accent', partner.organization.brand_color);
    root.setProperty('--accent-dark', `color-mix(in srgb, ${partner.organization.brand_color} 80%, black)`);
    return () => {
      root.removeProperty('--accent');
      root.removeProperty('--accent-dark');
    };
  }, [partner.organization.brand_color]);
  const signOut = async () => {
    await api.partnerPublic.signOut({ body: {} });
    // Nothing waits for the navigation: the router renders the next page on its own.
    void navigate(`/${partner.organization.id}/sign-in`);
  };
  return (
    <>
      <a className="skip-link" href="#main">
        Skip to content
      </a>
      <header className="portal-top">
        <p className="brand">
          {partner.organization.logo_url && (
            <img className="brand-logo" src={partner.organization.logo_url} alt="" data-testid="brand-logo" />
          )}
          {partner.organization.name} · partner portal
        </p>
        <div className="who">
          <span>{partner.email}</span>
          <button type="button" className="secondary small" onClick={() => void signOut()}>
            Sign out
          </button>
        </div>
      </header>
      <main id="main" className="portal" tabIndex={-1}>
        {!partner.livemode && (
          <div className="test-banner" role="region" aria-label="Preview">
            <p>
              <strong>Preview of {partner.name ?? partner.email} in test mode</strong> — what this test partner sees;
              every figure is test data.
            </p>
          </div>
        )}
        <h1>Hello{partner.name ? `, ${partner.name}` : ''}</h1>
        <PayoutHolds taxForm={taxForm} />
        {partner.memberships.length > 1 && (
          <div className="program-pick">
            <Field label="Program" name="program">
              {(attrs) => (
                <select {...attrs} value={membership.program.id} onChange={(e) => setProgramId(e.target.value)}>
                  {partner.memberships.map((m) => (
                    <option key={m.program.id} value={m.program.id}>
                      {m.program.name}
                    </option>
                  ))}
                </select>
              )}
            </Field>
          </div>
        )}
        <Links membership={membership} />
        <Activity programId={membership.program.id} currency={membership.program.currency} />
        <Earnings membership={membership} />
        <Customers programId={membership.program.id} />
        <PayoutSettings partner={partner} taxForm={taxForm} onChanged={onChanged} />
        <EmailSettings partner={partner} onSaved={onChanged} />
      </main>
    </>
  );
}

function Links({ membership }: { membership: PartnerMembership }) {
  const { program } = membership;
  const [page, setPage] = useState('');
  const [built, setBuilt] = useState<string>();
  const build = useSubmit(
    async () => orThrow(await api.partner.link({ query: { program_id: program.id, url: page.trim() } })).url,
    setBuilt,
  );
  const site = program.website_url ? new URL(program.website_url) : undefined;
  const host = site?.hostname;
  return (
    <section className="card" aria-labelledby="links-title">
      <h2 id="links-title">Your referral link</h2>
      <p>
        {program.name}: <Status value={membership.status} /> · you earn {commissionText(program)}.
      </p>
      {membership.status === 'pending' && (
        <p className="muted">
          Your application awaits the merchant&apos;s approval: your link starts counting once you are approved.
        </p>
      )}
      {membership.status === 'disabled' && (
        <p className="muted">
          This membership is disabled: your link no longer brings new customers; those you referred keep earning you
          commissions.
        </p>
      )}
      {membership.referral_link ? (
        <p className="link-row">
          <code data-testid="referral-link">{membership.referral_link}</code>{' '}
          <CopyButton text={membership.referral_link} label="Copy link" />
        </p>
      ) : (
        <>
          {/* No website set: the link that works is any link to the merchant's site with ?ref=<slug> added (the snippet reads it on every page). */}
          <p className="link-row">
            <code data-testid="referral-parameter">?ref={membership.slug}</code>{' '}
            <CopyButton text={`?ref=${membership.slug}`} label="Copy" />
          </p>
          <p className="muted small">
            Add it to the end of any link to the merchant&apos;s site, e.g.{' '}
            <code>https://their-site.example/pricing?ref={membership.slug}</code> (use{' '}
            <code>&amp;ref={membership.slug}</code> when the link already has a &quot;?&quot;).
          </p>
        </>
      )}
      {membership.aliases.length > 0 && (
        <p className="muted small" data-testid="aliases">
          Your earlier links keep working too: {membership.aliases.length === 1 ? 'the alias' : 'the aliases'}{' '}
          {membership.aliases.map((alias, i) => (
            <span key={alias}>
              {i > 0 && ', '}
              <code>?ref={alias}</code>
            </span>
          ))}{' '}
          {membership.aliases.length === 1 ? 'credits' : 'credit'} you as your link does.
        </p>
      )}
      {host && (
        <form className="inline-form" onSubmit={build.submit} noValidate aria-label="Link to any page">
          <Field
            label={`Link to any page of ${host}`}
            name="url"
            value={page}
            onChange={setPage}
            error={build.error}
            placeholder={`${site?.origin}/pricing`}
          />
          <button type="submit" className="secondary" disabled={build.busy || !page.trim()}>
            Build link
          </button>
        </form>
      )}
      <FormError error={build.error} fields={['url']} />
      {built && (
        <p className="link-row">
          <code data-testid="built-link">{built}</code> <CopyButton text={built} label="Copy" />
        </p>
      )}
    </section>
  );
}

function Activity({ programId, currency }: { programId: string; currency: string }) {
  const [days, setDays] = useState(30);
  const stats = useLoad(async () => {
    const today = new Date(Math.floor(Date.now() / DAY_MS) * DAY_MS);
    const to = new Date(today.getTime() + DAY_MS);
    const from = new Date(to.getTime() - days * DAY_MS);
    return orThrow(
      await api.partner.stats({
        query: { program_id: programId, from: from.toISOString(), to: to.toISOString(), interval: 'day' },
      }),
    );
  }, [programId, days]);
  const points = stats.data?.points ?? [];
  const totals = stats.data?.totals;
  // The figures are the service's (totals): the page only formats them.
  const amounts = (list: { currency: string; amount: number }[] | undefined) =>
    list?.length ? list.map((e) => money(e.amount, e.currency)).join(' + ') : money(0, currency);
  const most = Math.max(1, ...points.map((p) => p.clicks));
  return (
    <section aria-labelledby="activity-title">
      <div className="page-header">
        <h2 id="activity-title">Activity</h2>
        <Field label="Period" name="days">
          {(attrs) => (
            <select {...attrs} value={days} onChange={(e) => setDays(Number(e.target.value))}>
              <option value={7}>Last 7 days</option>
              <option value={30}>Last 30 days</option>
              <option value={90}>Last 90 days</option>
            </select>
          )}
        </Field>
      </div>
      <FormError error={stats.error} />
      <div className="kpis">
        {(
          [
            ['Clicks', totals?.clicks ?? 0],
            ['Signups', totals?.signups ?? 0],
            ['Conversions', totals?.conversions ?? 0],
            ['Earned', amounts(totals?.earned)],
            ...(totals?.on_hold.length ? ([['Under review', amounts(totals.on_hold)]] as const) : []),
          ] as const
        ).map(([label, value]) => (
          <div className="kpi" key={label}>
            <div className="label">{label}</div>
            <div className="value">{value}</div>
          </div>
        ))}
      </div>
      <p className="muted small">
        Earned: commissions pending, approved or paid, less refunds; commissions under review count once the merchant
        releases them.
      </p>
      {points.length > 0 && (
        <figure className="card" aria-label={`Clicks per day: ${totals?.clicks ?? 0} in ${days} days`}>
          <div className="bars" aria-hidden="true">
            {points.map((p) => (
              <span
                key={p.period}
                className={p.clicks ? 'has' : ''}
                style={{ height: `${(p.clicks / most) * 100}%` }}
                title={`${date(p.period)}: ${p.clicks} clicks`}
              />
            ))}
          </div>
          <figcaption className="bars-legend">
            <span>{date(points[0].period)}</span>
            <span>clicks per day</span>
            <span>{date(points[points.length - 1].period)}</span>
          </figcaption>
        </figure>
      )}
    </section>
  );
}

function Customers({ programId }: { programId: string }) {
  const customers = usePagedList(
    async (cursor) => {
      const page = orThrow(await api.partner.customers({ query: { program_id: programId, cursor, limit: 20 } }));
      return { items: page.customers, next_cursor: page.next_cursor };
    },
    [programId],
  );
  return (
    <section aria-labelledby="customers-title">
      <h2 id="customers-title">Customers you referred</h2>
      <p className="muted small">Shown masked: the merchant never shares who they are.</p>
      <DataTable
        label="Customers"
        list={customers}
        rowKey={(c) => `${c.customer}-${c.signed_up_at}`}
        empty={<Empty title="No customer yet" />}
        columns={[
          { header: 'Customer', rowHeader: true, cell: (c) => <code>{c.customer}</code> },
          { header: 'Status', cell: (c) => <Status value={c.status} /> },
          { header: 'Signed up', cell: (c) => date(c.signed_up_at) },
          { header: 'First payment', cell: (c) => date(c.first_conversion_at) },
        ]}
      />
    </section>
  );
}
