import { useEffect, useState } from 'react';
import type { PartnerMembership, PartnerPayout } from '@affiliate-attribution/contract';
import { Empty, Status, date, money } from '../ui';
import { DataTable, usePagedList } from '../table';
import { api, orThrow } from './portal-api';
import { commissionText } from './Join';

/** The partner's earnings in one program: balance, commissions and payouts (with a retried payout's note). */
export function Earnings({ membership }: { membership: PartnerMembership }) {
  const programId = membership.program.id;
  const commissions = usePagedList(
    async (cursor) => {
      const page = orThrow(await api.partner.commissions({ query: { program_id: programId, cursor, limit: 20 } }));
      return { items: page.commissions, next_cursor: page.next_cursor };
    },
    [programId],
  );
  const payouts = usePagedList(
    async (cursor) => {
      const page = orThrow(await api.partner.payouts({ query: { program_id: programId, cursor, limit: 20 } }));
      return { items: page.payouts, next_cursor: page.next_cursor, balances: page.balances };
    },
    [programId],
  );
  const [balances, setBalances] = useState(payouts.data?.balances ?? []);
  useEffect(() => {
    if (payouts.data && payouts.pages.page === 1) setBalances(payouts.data.balances);
  }, [payouts.data, payouts.pages.page]);
  return (
    <>
      <section aria-labelledby="balance-title">
        <h2 id="balance-title">Balance and next payout</h2>
        {balances.length === 0 ? (
          <Empty title="Nothing earned yet">
            <p>
              Share your link: every sale it brings earns you {commissionText(membership.program)}, approved{' '}
              {membership.program.hold_days} days after the sale.
            </p>
          </Empty>
        ) : (
          balances.map((b) => (
            <div className="card" key={b.currency}>
              <dl className="facts">
                <dt>Pending (in the {membership.program.hold_days}-day hold)</dt>
                <dd>{money(b.pending, b.currency)}</dd>
                {b.on_hold !== 0 && (
                  <>
                    <dt>Under review</dt>
                    <dd>{money(b.on_hold, b.currency)}</dd>
                  </>
                )}
                <dt>Approved, to be paid</dt>
                <dd>{money(b.approved, b.currency)}</dd>
                {b.in_payout !== 0 && (
                  <>
                    <dt>In a payout on its way</dt>
                    <dd>{money(b.in_payout, b.currency)}</dd>
                  </>
                )}
                <dt>Paid so far</dt>
                <dd>{money(b.paid, b.currency)}</dd>
              </dl>
              {b.payout_hold ? (
                <p className="notice-warn next-payout" data-testid="next-payout">
                  {b.payout_hold.message}
                </p>
              ) : (
                <p className="next-payout" data-testid="next-payout">
                  {b.next_payout.state === 'due'
                    ? `Your approved balance reaches the ${money(b.minimum_payout, b.currency)} minimum: it is paid in the merchant's next payout.`
                    : b.next_payout.state === 'scheduled' && b.next_payout.eligible_from
                      ? `Next payout: once your commissions are approved on ${date(b.next_payout.eligible_from)}, your balance reaches the ${money(b.minimum_payout, b.currency)} minimum and is paid in the merchant's next payout after that.`
                      : b.next_payout.state === 'short'
                        ? b.minimum_payout > 0
                          ? `Next payout: ${money(b.next_payout.shortfall, b.currency)} more in commissions to reach the ${money(b.minimum_payout, b.currency)} minimum.`
                          : `Next payout: after ${money(b.next_payout.shortfall, b.currency)} more in commissions (a refund after a payout left your balance below zero).`
                        : `Nothing to pay at the moment: new commissions are paid in the merchant's next payout once approved.${b.on_hold !== 0 ? ' Those under review count once the merchant releases them.' : ''}`}
                </p>
              )}
            </div>
          ))
        )}
      </section>
      <section aria-labelledby="commissions-title">
        <h2 id="commissions-title">Commissions</h2>
        <DataTable
          label="Commissions"
          list={commissions}
          rowKey={(c) => c.id}
          empty={<Empty title="No commission yet" />}
          columns={[
            { header: 'Sale', rowHeader: true, cell: (c) => date(c.created_at) },
            {
              header: 'Customer',
              className: 'nowrap',
              cell: (c) => c.customer ?? (c.type === 'adjustment' ? 'Adjustment' : '—'),
            },
            { header: 'Amount', cell: (c) => money(c.amount, c.currency) },
            {
              header: 'Status',
              cell: (c) => (
                <>
                  <Status value={c.status} />
                  {c.status === 'pending' && c.approves_at && (
                    <>
                      <br />
                      <small className="muted">approved on {date(c.approves_at)}</small>
                    </>
                  )}
                </>
              ),
            },
          ]}
        />
      </section>
      <section aria-labelledby="payouts-title">
        <h2 id="payouts-title">Payouts</h2>
        <DataTable
          label="Payouts"
          list={payouts}
          rowKey={(p) => p.id}
          empty={
            <Empty title="No payout yet">
              <p>
                Approved commissions are paid once they reach the{' '}
                {money(membership.program.minimum_payout, membership.program.currency)} minimum.
              </p>
            </Empty>
          }
          columns={[
            { header: 'Created', rowHeader: true, cell: (p) => date(p.created_at) },
            { header: 'Amount', cell: (p) => money(p.amount, p.currency) },
            {
              header: 'Status',
              cell: (p) => (
                <>
                  <Status value={p.status} />
                  {p.failure_reason && (
                    <>
                      <small className="failure-reason">{p.failure_reason}.</small>
                      <small className="retry-note">
                        <RetryNote payout={p} payouts={payouts.rows ?? []} />
                      </small>
                    </>
                  )}
                </>
              ),
            },
            { header: 'Paid on', cell: (p) => date(p.paid_at) },
          ]}
        />
      </section>
    </>
  );
}

/** Where a failed payout's commissions went: the payout the merchant sent in its place, or the next one. */
function RetryNote({ payout, payouts }: { payout: PartnerPayout; payouts: PartnerPayout[] }) {
  if (!payout.retried_by_payout_id)
    return <>Check your payout details with the merchant: these commissions go into the next payout.</>;
  const retry = payouts.find((p) => p.id === payout.retried_by_payout_id);
  return retry ? (
    <>
      Sent again: these commissions went into the payout of {date(retry.created_at)} (
      {money(retry.amount, retry.currency)}, {retry.status}).
    </>
  ) : (
    <>Sent again: these commissions went into payout {payout.retried_by_payout_id.slice(0, 8)}.</>
  );
}
