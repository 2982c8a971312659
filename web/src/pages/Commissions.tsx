import { useState } from 'react';
import type { Commission } from '@affiliate-attribution/contract';
import { api, data } from '../api';
import { Empty, FormError, PageHeader, Status, date, money, useConfirm, useSubmit } from '../ui';
import { DataTable, FilterSelect, usePagedList } from '../table';
import { ExportCsv } from '../export-csv';
import { AffiliateLink, useAffiliateNames } from './AffiliateName';
import { HoldReasons } from './HoldReasons';
import { PayoutsSection } from './Payouts';

const COMMISSION_STATUSES = ['on_hold', 'pending', 'approved', 'paid', 'rejected', 'reversed'] as const;
type CommissionStatus = (typeof COMMISSION_STATUSES)[number];

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
export function Commissions() {
  const [version, setVersion] = useState(0);
  const bump = () => setVersion((v) => v + 1);
  return (
    <section>
      <PageHeader title="Commissions and payouts">
        <ExportCsv kind="commissions" />
      </PageHeader>
      <CommissionsSection key={`c${version}`} onPayoutsChanged={bump} />
      <PayoutsSection version={version} onChanged={bump} />
    </section>
  );
}
