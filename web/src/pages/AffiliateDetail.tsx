import { useState } from 'react';
import { Link, useParams } from 'react-router';
import type { Affiliate } from '@affiliate-attribution/contract';
import { api, data } from '../api';
import { InvitePartner } from '../partners/InvitePartner';
import { PreviewPortal } from '../partners/PreviewPortal';
import { useMode } from '../mode';
import {
  CommissionsByStatus,
  Empty,
  Field,
  FormError,
  PageHeader,
  Status,
  date,
  money,
  useLoad,
  useSubmit,
} from '../ui';
import { DataTable, usePagedList } from '../table';
import { StatusActions, linkOf, useSiteUrl } from './Affiliates';
import { HoldReasons } from './HoldReasons';
import { ReferralSlug } from './AffiliateSlug';
import { AffiliateTaxForm } from './AffiliateTaxForm';
import { StripeOnboarding } from './StripeOnboarding';

/** The longest period a report covers, to the end of today (UTC): the affiliate's figures "so far". */
const FIGURES_DAYS = 1095;

/** Where the partner is paid (their payout e-mail, or their e-mail), changed in place. */
function PayoutEmail({ affiliate, onSaved }: { affiliate: Affiliate; onSaved: (a: Affiliate) => void }) {
  const [editing, setEditing] = useState(false);
  const [value, setValue] = useState('');
  const save = useSubmit(
    async () =>
      data(await api.affiliates.update({ params: { id: affiliate.id }, body: { payout_email: value.trim() || null } }))
        .affiliate,
    (a) => {
      setEditing(false);
      onSaved(a);
    },
  );
  if (!editing)
    return (
      <>
        <span data-testid="payout-email">
          {affiliate.payout_email ?? affiliate.email}
          {!affiliate.payout_email && <small className="muted"> (their e-mail)</small>}
        </span>{' '}
        <button
          type="button"
          className="secondary small"
          aria-label="Change the payout e-mail"
          onClick={() => {
            setValue(affiliate.payout_email ?? '');
            save.setError(undefined);
            setEditing(true);
          }}
        >
          Change
        </button>
      </>
    );
  return (
    <form className="inline-form" onSubmit={save.submit} noValidate>
      <Field
        label="Payout e-mail"
        name="payout_email"
        type="email"
        value={value}
        onChange={setValue}
        error={save.error}
        hint={`PayPal or Wise address; empty: ${affiliate.email}`}
      />
      <button type="submit" className="small" disabled={save.busy}>
        Save<span className="visually-hidden"> payout e-mail</span>
      </button>
      <button type="button" className="secondary small" onClick={() => setEditing(false)}>
        Cancel
      </button>
      <FormError error={save.error} fields={['payout_email']} />
    </form>
  );
}

const METHODS: { value: Affiliate['payout_method']; label: string }[] = [
  { value: 'manual', label: 'Manual (export files)' },
  { value: 'paypal', label: 'PayPal (to the payout e-mail)' },
  { value: 'stripe', label: 'Stripe Connect (to the connected account)' },
  { value: 'wise', label: 'Wise (to the payout e-mail and name)' },
];

/** How "Send" pays this partner (POST /api/payouts/send): the rail, and for Stripe the connected account. */
function PayoutMethod({ affiliate, onSaved }: { affiliate: Affiliate; onSaved: (a: Affiliate) => void }) {
  const [method, setMethod] = useState(affiliate.payout_method);
  const [account, setAccount] = useState(affiliate.stripe_account_id ?? '');
  const save = useSubmit(
    async () =>
      data(
        await api.affiliates.update({
          params: { id: affiliate.id },
          body: {
            payout_method: method,
            ...(method === 'stripe' ? { stripe_account_id: account.trim() || null } : {}),
          },
        }),
      ).affiliate,
    onSaved,
  );
  return (
    <form className="inline-form" onSubmit={save.submit} noValidate>
      <Field label="Payout method" name="payout_method" error={save.error}>
        {(attrs) => (
          <select {...attrs} value={method} onChange={(e) => setMethod(e.target.value as Affiliate['payout_method'])}>
            {METHODS.map((m) => (
              <option key={m.value} value={m.value}>
                {m.label}
              </option>
            ))}
          </select>
        )}
      </Field>
      {method === 'stripe' && (
        <Field
          label="Stripe account (acct_…)"
          name="stripe_account_id"
          value={account}
          onChange={setAccount}
          error={save.error}
        />
      )}
      <button type="submit" className="small" disabled={save.busy}>
        Save<span className="visually-hidden"> payout method</span>
      </button>
      <FormError error={save.error} fields={['payout_method', 'stripe_account_id']} />
    </form>
  );
}

/** The affiliate's figures as the reports API sums them: one line per currency. */
function Figures({ id }: { id: string }) {
  const figures = useLoad(async () => {
    const now = new Date();
    const to = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate()) + 86_400_000;
    const query = {
      from: new Date(to - FIGURES_DAYS * 86_400_000).toISOString(),
      to: new Date(to).toISOString(),
      affiliate_id: id,
    };
    return data(await api.reports.affiliates({ query })).affiliates;
  }, [id]);
  if (figures.error) return <FormError error={figures.error} />;
  if (!figures.data) return null;
  return (
    <div className="card" data-testid="affiliate-figures">
      <h2>Last 3 years</h2>
      {figures.data.length === 0 && <p className="muted">No click, signup or sale yet.</p>}
      {figures.data.map((r) => (
        <dl className="facts" key={r.currency}>
          <dt>Clicks · signups · conversions</dt>
          <dd>
            {r.clicks} · {r.customers} · {r.conversions}
          </dd>
          <dt>Gross revenue</dt>
          <dd>{money(r.revenue, r.currency)}</dd>
          <dt>Refunds</dt>
          <dd>{money(r.refunded, r.currency)}</dd>
          <dt>Net revenue</dt>
          <dd>{money(r.net_revenue, r.currency)}</dd>
          <dt>Commissions</dt>
          <dd>
            <CommissionsByStatus totals={r.commissions} currency={r.currency} />
          </dd>
        </dl>
      ))}
    </div>
  );
}

export function AffiliateDetail() {
  const { id = '' } = useParams();
  const [site] = useSiteUrl();
  const mode = useMode();
  const loaded = useLoad(async () => data(await api.affiliates.get({ params: { id } })), [id]);
  const affiliate = { ...loaded, data: loaded.data?.affiliate };
  const [edited, setEdited] = useState<Affiliate>();
  const [editedAliases, setEditedAliases] = useState<{ id: string; aliases: string[] }>();
  const a: Affiliate | undefined = edited?.id === id ? edited : affiliate.data;
  const aliases = (editedAliases?.id === id ? editedAliases.aliases : loaded.data?.aliases) ?? [];
  const program = useLoad(
    async () => (a ? data(await api.programs.get({ params: { id: a.program_id } })).program : undefined),
    [a?.program_id],
  );
  const conversions = usePagedList(
    async (cursor) => {
      const page = data(await api.conversions.list({ query: { affiliate_id: id, cursor, limit: 20 } }));
      return { items: page.conversions, next_cursor: page.next_cursor };
    },
    [id],
  );
  const commissions = usePagedList(
    async (cursor) => {
      const page = data(await api.commissions.list({ query: { affiliate_id: id, cursor, limit: 20 } }));
      return { items: page.commissions, next_cursor: page.next_cursor };
    },
    [id],
  );
  const link = a && program.data ? linkOf(program.data, site, a.slug) : undefined;
  return (
    <section>
      <PageHeader title={a ? (a.name ?? a.email) : 'Affiliate'} />
      <p>
        <Link to="/affiliates">← All affiliates</Link>
      </p>
      <FormError error={affiliate.error} />
      {a && (
        <dl className="card facts">
          <dt>E-mail</dt>
          <dd>{a.email}</dd>
          <dt>Status</dt>
          <dd>
            <Status value={a.status} /> <StatusActions affiliate={a} onChanged={affiliate.reload} />
          </dd>
          <dt>Program</dt>
          <dd>{program.data?.name ?? '…'}</dd>
          <dt>Referral link</dt>
          <dd>
            <ReferralSlug
              affiliate={a}
              aliases={aliases}
              link={link}
              onSaved={(saved) => {
                setEdited(saved.affiliate);
                setEditedAliases({ id: saved.affiliate.id, aliases: saved.aliases });
              }}
            />
          </dd>
          <dt>Payouts to</dt>
          <dd>
            <PayoutEmail affiliate={a} onSaved={setEdited} />
          </dd>
          <dt>Paid by</dt>
          <dd>
            <PayoutMethod key={`${a.payout_method}:${a.stripe_account_id}`} affiliate={a} onSaved={setEdited} />
          </dd>
          <dt>Stripe Connect</dt>
          <dd>
            <StripeOnboarding affiliate={a} onCreated={affiliate.reload} />
          </dd>
          <dt>Tax form</dt>
          <dd>
            <AffiliateTaxForm affiliate={a} onChanged={affiliate.reload} />
          </dd>
          <dt>Partner portal</dt>
          <dd>
            {mode === 'test' && (
              <p className="preview-row">
                <PreviewPortal affiliate={a} />
              </p>
            )}
            <InvitePartner affiliate={a} />
          </dd>
        </dl>
      )}
      {a && <Figures id={a.id} />}
      <h2>Conversions</h2>
      <DataTable
        label="Conversions of this affiliate"
        list={conversions}
        rowKey={(c) => c.id}
        empty={
          <Empty title="No conversion yet">
            <p>Sales of the customers this affiliate referred appear here.</p>
          </Empty>
        }
        columns={[
          { header: 'Charge', rowHeader: true, cell: (c) => c.external_id },
          { header: 'Customer', cell: (c) => c.customer_id ?? '—' },
          { header: 'Amount', cell: (c) => money(c.amount, c.currency) },
          { header: 'Refunded', cell: (c) => (c.refunded_amount > 0 ? money(c.refunded_amount, c.currency) : '—') },
          { header: 'Commission', cell: (c) => money(c.commission_amount, c.currency) },
          { header: 'When', cell: (c) => date(c.occurred_at) },
        ]}
      />
      <h2>Commissions</h2>
      <DataTable
        label="Commissions of this affiliate"
        list={commissions}
        rowKey={(c) => c.id}
        empty={
          <Empty title="No commission yet">
            <p>Each conversion of this affiliate earns a commission, listed here to approve and pay.</p>
          </Empty>
        }
        columns={[
          { header: 'Type', rowHeader: true, cell: (c) => c.type },
          { header: 'Amount', cell: (c) => money(c.amount, c.currency) },
          {
            header: 'Status',
            cell: (c) => (
              <>
                <Status value={c.status} />
                <HoldReasons commission={c} />
              </>
            ),
          },
          { header: 'Created', cell: (c) => date(c.created_at) },
        ]}
      />
    </section>
  );
}
