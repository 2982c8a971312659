import { useEffect, useState } from 'react';
import type { Payout } from '@affiliate-attribution/contract';
import { api, data } from '../api';
import { Empty, Field, FormError, Status, date, money, useConfirm, useSubmit } from '../ui';
import { DataTable, FilterSelect, usePagedList } from '../table';
import { AffiliateLink, useAffiliateNames } from './AffiliateName';
import { useMode } from '../mode';
import { useSession } from '../App';

const PAYOUT_STATUSES = ['pending', 'processing', 'paid', 'failed', 'canceled'] as const;

const METHOD_NAMES: Record<Payout['method'], string> = {
  manual: 'Manual (export)',
  paypal: 'PayPal',
  stripe: 'Stripe',
  wise: 'Wise',
};

const shortId = (id: string) => id.slice(0, 8);

/**
 * Where to find the transfer at its provider: the ids the rail stored (PayPal batch and item,
 * Stripe transfer, Wise transfer), and the merchant's own reference given when marking it paid.
 */
export function TransferReference({ payout }: { payout: Payout }) {
  const parts: { label: string; value: string }[] = [];
  const ref = payout.provider_reference;
  if (ref && payout.method === 'paypal') {
    const [batch, item] = ref.split('/');
    parts.push({ label: 'PayPal batch', value: batch });
    if (item) parts.push({ label: 'item', value: item });
  } else if (ref && payout.method === 'stripe') parts.push({ label: 'Stripe transfer', value: ref });
  else if (ref && payout.method === 'wise') parts.push({ label: 'Wise transfer', value: ref });
  else if (ref) parts.push({ label: 'Provider', value: ref });
  if (payout.reference) parts.push({ label: 'Your reference', value: payout.reference });
  if (parts.length === 0) return <span className="muted">—</span>;
  return (
    <span className="transfer-reference">
      {parts.map((p) => (
        <span key={p.label}>
          <small className="muted">{p.label}</small> <code>{p.value}</code>{' '}
        </span>
      ))}
    </span>
  );
}

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

/** The payouts half of the Commissions page: the list, its filters and each payout's actions. */
export function PayoutsSection({ version, onChanged }: { version: number; onChanged: () => void }) {
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
                {p.failure_reason && <small className="failure-reason">{p.failure_reason}</small>}
              </>
            ),
          },
          { header: 'Commissions', cell: (p) => p.commission_count },
          { header: 'Method', cell: (p) => METHOD_NAMES[p.method] },
          { header: 'Affiliate', cell: (p) => <AffiliateLink id={p.affiliate_id} names={names} /> },
          { header: 'Created', className: 'nowrap', cell: (p) => date(p.created_at) },
          { header: 'Paid', className: 'nowrap', cell: (p) => date(p.paid_at) },
          { header: 'Reference', cell: (p) => <TransferReference payout={p} /> },
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
