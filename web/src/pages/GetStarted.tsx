import { useEffect, useId, useState, type ReactNode } from 'react';
import { Link } from 'react-router';
import { useSession } from '../App';
import { api, data } from '../api';
import { CopyButton, FormError, PageHeader, useLoad } from '../ui';
import { setMode, useMode } from '../mode';
import { linkOf, useSiteUrl } from './Affiliates';
import { captureSamples, paymentSamples, signupSamples, type Sample } from './get-started-samples';

/** How often the last step asks whether the first event has arrived. */
const POLL_MS = 3_000;

/** Code samples in tabs (one panel shown), each with its Copy button. */
function Samples({ samples, label }: { samples: Sample[]; label: string }) {
  const [shown, setShown] = useState(0);
  const id = useId();
  const sample = samples[shown];
  return (
    <div className="tabs">
      <div role="tablist" aria-label={label}>
        {samples.map((s, i) => (
          <button
            key={s.label}
            type="button"
            role="tab"
            id={`${id}-tab-${i}`}
            aria-selected={i === shown}
            aria-controls={`${id}-panel`}
            tabIndex={i === shown ? 0 : -1}
            className="small"
            onClick={() => setShown(i)}
            onKeyDown={(e) => {
              if (e.key === 'ArrowRight' || e.key === 'ArrowLeft') {
                const next = (shown + (e.key === 'ArrowRight' ? 1 : samples.length - 1)) % samples.length;
                setShown(next);
                document.getElementById(`${id}-tab-${next}`)?.focus();
              }
            }}
          >
            {s.label}
          </button>
        ))}
      </div>
      <div role="tabpanel" id={`${id}-panel`} aria-labelledby={`${id}-tab-${shown}`}>
        <pre className="code" tabIndex={0}>
          {sample.code}
        </pre>
        <CopyButton text={sample.code} label={`Copy ${sample.label}`} />
      </div>
    </div>
  );
}

function Step({ title, done, children }: { title: string; done?: boolean; children: ReactNode }) {
  const id = useId();
  return (
    <li className={done ? 'done' : undefined}>
      <section aria-labelledby={id}>
        <h2 id={id}>
          {title}
          {done && <span className="visually-hidden"> (done)</span>}
        </h2>
        {children}
      </section>
    </li>
  );
}

/**
 * Whether any event has reached the service yet: a click, a signup or a conversion, as the reports
 * API counts them over the longest period a report covers. Asked again every few seconds until one
 * has.
 */
function useFirstEvent() {
  const [tick, setTick] = useState(0);
  const found = useLoad(async () => {
    const now = new Date();
    const to = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate()) + 2 * 86_400_000;
    const query = {
      from: new Date(to - 1095 * 86_400_000).toISOString(),
      to: new Date(to).toISOString(),
      interval: 'month' as const,
    };
    return data(await api.reports.timeseries({ query })).totals.find(
      (t) => t.clicks > 0 || t.customers > 0 || t.conversions > 0,
    );
  }, [tick]);
  const arrived = found.data !== undefined;
  useEffect(() => {
    if (arrived) return;
    const timer = setInterval(() => setTick((t) => t + 1), POLL_MS);
    return () => clearInterval(timer);
  }, [arrived]);
  return { event: found.data, error: found.error };
}

export function GetStarted() {
  const { session } = useSession();
  const mode = useMode();
  const [site] = useSiteUrl();
  const programs = useLoad(async () => data(await api.programs.list({ query: { limit: 1 } })).programs, []);
  const affiliates = useLoad(async () => data(await api.affiliates.list({ query: { limit: 1 } })).affiliates, []);
  const { event, error } = useFirstEvent();
  const program = programs.data?.[0];
  const affiliate = affiliates.data?.[0];
  const ofAffiliate = useLoad(
    async () =>
      affiliate && affiliate.program_id !== program?.id
        ? data(await api.programs.get({ params: { id: affiliate.program_id } })).program
        : program,
    [affiliate?.program_id, program?.id],
  );
  const affiliateProgram = ofAffiliate.data;
  const slug = affiliate?.slug ?? 'your-affiliate';
  const ids = { origin: window.location.origin, organizationId: session.organization.id, slug };
  // Not before the program is known: a link on the fallback site first would be wrong a moment.
  const testLink = affiliate && !ofAffiliate.loading ? linkOf(affiliateProgram, site, affiliate.slug) : undefined;
  return (
    <section>
      <PageHeader title="Get started" />
      <p>
        From nothing to your first attributed sale, in test mode: nothing you try moves money or e-mails a partner. Your
        test API key (<code className="nowrap">svc_test_…</code>) goes in the environment variable{' '}
        <code>AFFILIATE_API_KEY</code> (create one on the <Link to="/developers">Developers</Link> page, in test mode).
      </p>
      <FormError error={programs.error ?? affiliates.error} />
      <ol className="steps">
        <Step title="Turn on test mode" done={mode === 'test'}>
          {mode === 'test' ? (
            <p>
              You are in test mode: the programs, partners and sales below are test data, apart from your live data.
              Create a test key on the <Link to="/developers">Developers</Link> page.
            </p>
          ) : (
            <>
              <p>
                Try everything first with test data: test partners get no e-mail, test payouts move no money, and your
                live figures stay clean.
              </p>
              <button type="button" onClick={() => setMode('test')}>
                Turn on test mode
              </button>
            </>
          )}
        </Step>
        <Step title="Create a program" done={!!program}>
          {program ? (
            <p>
              <strong>{program.name}</strong>:{' '}
              {program.website_url ? (
                <>referral links point to {program.website_url}.</>
              ) : (
                <>
                  set its website on the <Link to="/programs">Programs</Link> page, so that referral links point to your
                  site.
                </>
              )}
            </p>
          ) : (
            <p>
              A program sets what partners earn and where links point: <Link to="/programs">create one</Link>.
            </p>
          )}
        </Step>
        <Step title="Add an affiliate" done={!!affiliate}>
          {affiliate && testLink ? (
            <p>
              Your first partner's link, to try everything below: <code className="break">{testLink}</code>{' '}
              <CopyButton text={testLink} label="Copy link" />
            </p>
          ) : (
            <p>
              <Link to="/affiliates">Add a partner</Link> (yourself, to test): they get a link with <code>?ref=</code>{' '}
              and their slug.
            </p>
          )}
        </Step>
        <Step title="Capture the referral on your site">
          <p>
            Recommended: the SDK's server middleware sets the referral cookie from your own domain, so browsers keep it
            for the whole click window and no script can be blocked. Or add the snippet tag to your pages (organization
            id <code>{session.organization.id}</code>, public).
          </p>
          <Samples samples={captureSamples(ids)} label="Ways to capture the referral" />
        </Step>
        <Step title="At signup, record the customer">
          <p>
            When an account is created, send your customer id with the visitor's <code>svc_aff</code> cookie (
            <code>cookie_id</code>): the customer is attributed to the partner, for life or the program's window.
          </p>
          <Samples samples={signupSamples(ids)} label="Signup call" />
        </Step>
        <Step title="At payment, record the conversion">
          <p>
            On every successful charge, send its id (<code>external_id</code>, so that a resent call never counts
            twice), the amount and the customer id. The first charge of a customer that comes by{' '}
            <code>customer_id</code> only needs <code>kind: "initial"</code>; renewals leave it out. Or connect Stripe
            or Paddle on the Integrations page instead.
          </p>
          <Samples samples={paymentSamples(ids)} label="Payment call" />
        </Step>
        <Step title="See your first event arrive" done={!!event}>
          <p data-testid="first-event" className={event ? 'first-event done' : 'first-event'} role="status">
            {event
              ? `First event received: ${event.clicks} click${event.clicks === 1 ? '' : 's'}, ${event.customers} signup${event.customers === 1 ? '' : 's'}, ${event.conversions} conversion${event.conversions === 1 ? '' : 's'}. See them on the Overview.`
              : testLink
                ? `Waiting for your first event… Open ${testLink} or run the curl calls above: this turns green when it arrives.`
                : 'Waiting for your first event… This turns green when the first click, signup or sale arrives.'}
          </p>
          <FormError error={error} />
          <div className="card notice">
            <p>
              <strong>Testing with your own e-mail or browser?</strong> A sale whose customer has the partner's e-mail,
              or whose click came from the partner's own browser, is held as a <code>self_referral</code>. It waits on
              the <Link to="/commissions">Commissions</Link> page with its reason: press <em>Release</em> to approve it,
              or <em>Reject</em>. You can turn the rule off in the program's fraud rules.
            </p>
          </div>
        </Step>
        <Step title="Go live">
          <p>When your test sale shows up, switch your code to live data:</p>
          <ul>
            <li>
              Turn test mode off and create a live API key on the <Link to="/developers">Developers</Link> page; put it
              in <code>AFFILIATE_API_KEY</code> in production instead of the test key.
            </li>
            <li>
              Remove <code>data-mode="test"</code> from the snippet tag.
            </li>
            <li>
              Connect your payment provider's live account on the Integrations page (the test one keeps sending test
              events to test data).
            </li>
            <li>
              Create your live program and invite your real partners: test programs and partners stay in test mode.
              Delete all test data from the Developers page whenever you like.
            </li>
          </ul>
          {mode === 'test' && (
            <button type="button" className="secondary" onClick={() => setMode('live')}>
              Leave test mode
            </button>
          )}
        </Step>
      </ol>
    </section>
  );
}
