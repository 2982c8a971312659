import { useEffect, useState } from 'react';
import type { Commission, Payout } from '@affiliate-attribution/contract';
import { api, data } from '../api';
import { Empty, Field, FormError, PageHeader, Status, date, money, useConfirm, useSubmit } from '../ui';
import { DataTable, FilterSelect, usePagedList } from '../table';
import { AffiliateLink, useAffiliateNames } from './AffiliateName';
import { HoldReasons } from './HoldReasons';
import { useMode } from '../mode';
import { useSession } from '../App';

const COMMISSION_STATUSES = ['on_hold', 'pending', 'approved', 'paid', 'rejected', 'reversed'] as const;
type CommissionStatus = (typeof COMMISSION_STATUSES)[number];
const PAYOUT_STATUSES = ['pending', 'processing', 'paid', 'failed', 'canceled'] as const;

const METHOD_NAMES: Record<Payout['method'], string> = {
  manual: 'Manual (export)',
  paypal: 'PayPal',
  stripe: 'Stripe',
  wise: 'Wise',
};

function CommissionsSection({ onPayoutsChanged }: { onPayoutsChanged: () => void }) {
  const [status, setStatus] = useState<CommissionStatus | ''>('');
  const list = usePagedList(
    async (cursor) => {
      const page = data(await api.commissions.list({ query: { status: status || undefined, cursor } }));
      return { items: page.commissions, next_cursor: page.next_cursor };
    },
    [status],
  );
  const pages = list.pages;
  const [selected, setSelected] = useState<Set<string>>(new Set());
  const confirm = useConfirm();
  const decidable = (c: Commission) =>
    c.status === 'pending' || c.status === 'on_hold' || (c.status === 'approved' && !c.payout_id);
  const rows = list.rows ?? [];
  const chosen = rows.filter((c) => selected.has(c.id));
  const names = useAffiliateNames(list.rows?.map((c) => c.affiliate_id));

  const act = useSubmit(async () => undefined);
  async function decide(kind: 'approve' | 'reject', entries: Commission[]) {
    if (entries.length === 0) return;
    // A held entry was never owed yet: releasing or rejecting it is the one click a review takes.
    const review = entries.every((c) => c.status === 'on_hold');
    if (
      kind === 'reject' &&
      !review &&
      !(await confirm({
        title: `Reject ${entries.length} commission${entries.length > 1 ? 's' : ''}?`,
        body: 'A rejected commission is never paid. This cannot be undone.',
        confirm: 'Reject',
      }))
    )
      return;
    act.setError(undefined);
    try {
      for (const c of entries) {
        const params = { id: c.id };
        data(
          kind === 'approve'
            ? await api.commissions.approve({ params, body: {} })
            : await api.commissions.reject({ params, body: {} }),
        );
      }
    } catch (err) {
      act.setError(err as never);
    }
    setSelected(new Set());
    list.reload();
    onPayoutsChanged();
  }

  return (
    <section aria-labelledby="commissions-title">
      <h2 id="commissions-title">Commissions</h2>
      <div className="filters">
        <FilterSelect
          label="Status"
          name="status"
          value={status}
          every="Every status"
          options={COMMISSION_STATUSES}
          onChange={(value) => {
            setStatus(value);
            pages.reset();
            setSelected(new Set());
          }}
        />
        <button
          type="button"
          onClick={() =>
            void decide(
              'approve',
              chosen.filter((c) => c.status !== 'approved'),
            )
          }
          disabled={chosen.length === 0}
        >
          Approve selected
        </button>
        <button
          type="button"
          className="danger"
          onClick={() => void decide('reject', chosen)}
          disabled={chosen.length === 0}
        >
          Reject selected
        </button>
      </div>
      <FormError error={act.error} />
      <DataTable
        label="Commissions"
        list={list}
        rowKey={(c) => c.id}
        empty={
          <Empty title={status ? `No ${status.replace('_', ' ')} commission` : 'No commission yet'}>
            <p>Commissions are earned by affiliates' sales; they appear here to approve before payouts.</p>
          </Empty>
        }
        columns={[
          {
            header: (
              <label className="check">
                <input
                  type="checkbox"
                  aria-label="Select every commission that can be approved or rejected"
                  checked={rows.filter(decidable).length > 0 && rows.filter(decidable).every((c) => selected.has(c.id))}
                  onChange={(e) =>
                    setSelected(new Set(e.target.checked ? rows.filter(decidable).map((c) => c.id) : []))
                  }
                />
                <span className="on-cards">Select all</span>
              </label>
            ),
            label: 'Select',
            cell: (c) =>
              decidable(c) && (
                <input
                  type="checkbox"
                  aria-label={`Select the commission of ${money(c.amount, c.currency)} created ${date(c.created_at)}`}
                  checked={selected.has(c.id)}
                  onChange={(e) =>
                    setSelected((s) => {
                      const next = new Set(s);
                      if (e.target.checked) next.add(c.id);
                      else next.delete(c.id);
                      return next;
                    })
                  }
                />
              ),
          },
          { header: 'Amount', rowHeader: true, cell: (c) => money(c.amount, c.currency) },
          {
            header: 'Status',
            cell: (c) => (
              <>
                <Status value={c.status} />
                {c.rejection_reason && <small className="muted"> {c.rejection_reason}</small>}
                <HoldReasons commission={c} />
              </>
            ),
          },
          {
            header: 'Type',
            cell: (c) => (
              <>
                {c.type}
                {c.description && <small className="muted"> · {c.description}</small>}
              </>
            ),
          },
          { header: 'Affiliate', cell: (c) => <AffiliateLink id={c.affiliate_id} names={names} /> },
          { header: 'Created', cell: (c) => date(c.created_at) },
          {
            header: 'Actions',
            hiddenHeader: true,
            className: 'nowrap',
            // Nothing at all (not even a space) on a row with no action: its card then has no empty line.
            cell: (c) =>
              decidable(c) && (
                <>
                  {(c.status === 'pending' || c.status === 'on_hold') && (
                    <button
                      type="button"
                      className="small"
                      onClick={() => void decide('approve', [c])}
                      aria-label={`${c.status === 'on_hold' ? 'Release' : 'Approve'} the commission of ${money(c.amount, c.currency)}`}
                    >
                      {c.status === 'on_hold' ? 'Release' : 'Approve'}
                    </button>
                  )}{' '}
                  <button
                    type="button"
                    className="danger small"
                    onClick={() => void decide('reject', [c])}
                    aria-label={`Reject the commission of ${money(c.amount, c.currency)}`}
                  >
                    Reject
                  </button>
                </>
              ),
          },
        ]}
      />
    </section>
  );
}

/** A payout as a person tells it apart in the list: the first block of its id. */
const shortId = (id: string) => id.slice(0, 8);

/** `canSend`: an owner's (sending and retrying spend through the rail an owner connected; contract/src/common/access.ts). */
function PayoutActions({
  payout,
  canSend,
  onChanged,
  onShow,
}: {
  payout: Payout;
  canSend: boolean;
  onChanged: () => void;
  onShow: (id: string) => void;
}) {
  const confirm = useConfirm();
  const [reference, setReference] = useState('');
  const [paying, setPaying] = useState(false);
  const pay = useSubmit(
    async () =>
      data(
        await api.payouts.markPaid({
          params: { id: payout.id },
          body: reference.trim() ? { reference: reference.trim() } : {},
        }),
      ),
    onChanged,
  );
  const cancel = useSubmit(async () => {
    if (
      !(await confirm({
        title: 'Cancel this payout?',
        body: `Its ${payout.commission_count} commissions go back to approved, for the next payout.`,
        confirm: 'Cancel payout',
      }))
    )
      return;
    return data(await api.payouts.cancel({ params: { id: payout.id }, body: {} }));
  }, onChanged);
  // Retry: the failed payout stays as the record; its commissions (approved again) go out in a new payout, sent at once.
  const retry = useSubmit(async () => {
    if (
      !(await confirm({
        title: 'Retry this payout?',
        body: "Its commissions go into a new payout, sent at once by the affiliate's payout method. Fix the affiliate's payout details first if they caused the failure.",
        confirm: 'Retry',
      }))
    )
      return;
    return data(await api.payouts.retry({ params: { id: payout.id }, body: {} }));
  }, onChanged);
  // Retried once already: the failed payout stays as the record; its commissions went out in the payout it names.
  if (payout.status === 'failed' && payout.retried_by_payout_id)
    return (
      <span className="nowrap">
        Retried as{' '}
        <button
          type="button"
          className="link"
          onClick={() => onShow(payout.retried_by_payout_id!)}
          aria-label={`Retried as payout ${shortId(payout.retried_by_payout_id)}: show it`}
        >
          payout {shortId(payout.retried_by_payout_id)}
        </button>
      </span>
    );
  if (payout.status === 'failed' && !canSend) return <small className="muted">Only an owner can retry a payout</small>;
  if (payout.status === 'failed')
    return (
      <span className="nowrap">
        <button type="button" className="small" onClick={() => void retry.submit()} disabled={retry.busy}>
          Retry
        </button>
        <FormError error={retry.error} />
      </span>
    );
  if (payout.status !== 'pending') return null;
  if (paying)
    return (
      <form className="inline-form" onSubmit={pay.submit} noValidate>
        <Field
          label="Transfer reference (optional)"
          name="reference"
          value={reference}
          onChange={setReference}
          error={pay.error}
        />
        <button type="submit" className="small" disabled={pay.busy}>
          Mark paid
        </button>
        <FormError error={pay.error} fields={['reference']} />
      </form>
    );
  return (
    <span className="nowrap">
      <button type="button" className="small" onClick={() => setPaying(true)}>
        Mark paid…
      </button>{' '}
      <button type="button" className="danger small" onClick={() => void cancel.submit()} disabled={cancel.busy}>
        Cancel
      </button>
      <FormError error={cancel.error} />
    </span>
  );
}

function PayoutsSection({ version, onChanged }: { version: number; onChanged: () => void }) {
  const [status, setStatus] = useState<(typeof PAYOUT_STATUSES)[number] | ''>('pending');
  const list = usePagedList(
    async (cursor) => {
      const page = data(await api.payouts.list({ query: { status: status || undefined, cursor } }));
      return { items: page.payouts, next_cursor: page.next_cursor };
    },
    [status, version],
  );
  const pages = list.pages;
  const names = useAffiliateNames(list.rows?.map((p) => p.affiliate_id));
  // "Retried as payout …": every status listed, the payout named brought into view and marked.
  const [shown, setShown] = useState<string>();
  const show = (id: string) => {
    setShown(id);
    if (status !== '') {
      setStatus('');
      pages.reset();
    }
  };
  useEffect(() => {
    if (shown) document.getElementById(`payout-${shown}`)?.scrollIntoView({ block: 'center' });
  }, [shown, list.rows]);
  const confirm = useConfirm();
  const mode = useMode();
  const owner = useSession().session.user.role === 'owner';
  const [selected, setSelected] = useState<Set<string>>(new Set());
  const toggle = (id: string) =>
    setSelected((current) => {
      const next = new Set(current);
      if (next.has(id)) next.delete(id);
      else next.add(id);
      return next;
    });
  const send = useSubmit(
    async () => {
      const ids = [...selected];
      const body =
        mode === 'test'
          ? 'Test mode: nothing reaches a provider and no money moves. Each is marked paid at once (simulated), or failed when its affiliate has no payout destination.'
          : "Each goes by its affiliate's payout method (PayPal, Stripe or Wise) from your connected account. This moves money.";
      if (
        !(await confirm({ title: `Send ${ids.length} payout${ids.length === 1 ? '' : 's'}?`, body, confirm: 'Send' }))
      )
        return;
      return data(await api.payouts.send({ body: { payout_ids: ids } }));
    },
    () => {
      setSelected(new Set());
      onChanged();
    },
  );
  const create = useSubmit(async () => {
    if (
      !(await confirm({
        title: 'Create payouts?',
        body: "Gathers every approved commission into one payout per affiliate, program and currency at or above the program's minimum payout.",
        confirm: 'Create payouts',
      }))
    )
      return;
    return data(await api.payouts.create({ body: {} }));
  }, onChanged);
  return (
    <section aria-labelledby="payouts-title">
      <h2 id="payouts-title">Payouts</h2>
      <div className="filters">
        <FilterSelect
          label="Status"
          name="payout-status"
          value={status}
          every="Every status"
          options={PAYOUT_STATUSES}
          onChange={(value) => {
            setStatus(value);
            pages.reset();
          }}
        />
        <button type="button" onClick={() => void create.submit()} disabled={create.busy}>
          Create payouts
        </button>
        <span className="exports">
          Export pending:{' '}
          <a href="/api/payouts/export?format=csv" download="payouts.csv">
            CSV
          </a>{' '}
          ·{' '}
          <a href="/api/payouts/export?format=paypal" download="payouts-paypal.csv">
            PayPal
          </a>{' '}
          ·{' '}
          <a href="/api/payouts/export?format=wise" download="payouts-wise.csv">
            Wise
          </a>
        </span>
      </div>
      <FormError error={create.error} />
      {owner ? (
        <div className="send-bar">
          <button type="button" onClick={() => void send.submit()} disabled={send.busy || selected.size === 0}>
            {selected.size > 0 ? `Send ${selected.size} selected` : 'Send selected'}
          </button>
          <span className="muted">
            Select pending payouts of affiliates paid by PayPal, Stripe or Wise; manual ones go by the export files.
          </span>
        </div>
      ) : (
        <p className="muted send-bar">
          Only an owner can send payouts through PayPal, Stripe or Wise: they move the organization's money. You can
          create, export, mark paid and cancel them.
        </p>
      )}
      <FormError error={send.error} />
      <DataTable
        label="Payouts"
        list={list}
        rowKey={(p) => p.id}
        empty={
          <Empty title={status ? `No ${status} payout` : 'No payout yet'}>
            <p>Approve commissions, then create payouts: each gathers what one affiliate is owed.</p>
          </Empty>
        }
        columns={[
          {
            header: 'Select',
            hiddenHeader: true,
            cell: (p) =>
              p.status === 'pending' && owner ? (
                <input
                  type="checkbox"
                  aria-label={`Select the payout of ${money(p.amount, p.currency)}`}
                  checked={selected.has(p.id)}
                  onChange={() => toggle(p.id)}
                />
              ) : null,
          },
          {
            header: 'Amount',
            rowHeader: true,
            cell: (p) => (
              <span id={`payout-${p.id}`} className={shown === p.id ? 'shown-payout' : undefined}>
                {money(p.amount, p.currency)} <small className="muted nowrap">payout {shortId(p.id)}</small>
              </span>
            ),
          },
          {
            header: 'Status',
            cell: (p) => (
              <>
                <Status value={p.status} />
                {p.simulated && <small className="muted"> simulated</small>}
                {p.reference && <small className="muted"> {p.reference}</small>}
                {p.failure_reason && <small className="failure-reason">{p.failure_reason}</small>}
              </>
            ),
          },
          { header: 'Commissions', cell: (p) => p.commission_count },
          { header: 'Method', cell: (p) => METHOD_NAMES[p.method] },
          { header: 'Affiliate', cell: (p) => <AffiliateLink id={p.affiliate_id} names={names} /> },
          { header: 'Created', cell: (p) => date(p.created_at) },
          {
            header: 'Actions',
            hiddenHeader: true,
            cell: (p) => <PayoutActions payout={p} canSend={owner} onChanged={onChanged} onShow={show} />,
          },
        ]}
      />
    </section>
  );
}

export function Commissions() {
  const [version, setVersion] = useState(0);
  const bump = () => setVersion((v) => v + 1);
  return (
    <section>
      <PageHeader title="Commissions and payouts" />
      <CommissionsSection key={`c${version}`} onPayoutsChanged={bump} />
      <PayoutsSection version={version} onChanged={bump} />
    </section>
  );
}
