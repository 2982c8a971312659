import { useId, useRef, useState } from 'react';
import type { Conversion, Customer } from '@affiliate-attribution/contract';
import { api, ApiError, data } from '../api';
import { Empty, Field, FormError, PageHeader, Status, dateTime, money, toApiError, useSubmit } from '../ui';
import { DataTable, usePagedList, type Column } from '../table';
import { ExportCsv } from '../export-csv';
import { AffiliateLink, useAffiliateNames, type AffiliateNames } from './AffiliateName';

const STATUSES = ['trial', 'active', 'capped', 'canceled'] as const;

/** One dialog: the amount (empty: the whole charge), then the refund is recorded; empty again for the next one. */
function RefundButton({ conversion, onDone }: { conversion: Conversion; onDone: () => void }) {
  const dialog = useRef<HTMLDialogElement>(null);
  const titleId = useId();
  const [amount, setAmount] = useState('');
  const close = () => {
    dialog.current?.close();
    setAmount('');
    refund.setError(undefined);
  };
  const refund = useSubmit(
    async () =>
      data(
        await api.conversions.refund({
          params: { id: conversion.id },
          body: amount.trim() !== '' ? { amount: Number(amount) } : {},
        }),
      ),
    () => {
      close();
      onDone();
    },
  );
  if (conversion.status === 'reversed') return <span className="muted">refunded</span>;
  return (
    <>
      <button
        type="button"
        className="secondary small"
        onClick={() => dialog.current?.showModal()}
        aria-label={`Refund ${conversion.external_id}`}
      >
        Refund…
      </button>
      <dialog ref={dialog} aria-labelledby={titleId} onClose={() => setAmount('')}>
        <form onSubmit={refund.submit} noValidate>
          <h2 id={titleId}>Refund {conversion.external_id}</h2>
          <p>
            A full refund reverses the commission of {money(conversion.commission_amount, conversion.currency)}; a
            partial one reduces it in proportion.
            {conversion.refunded_amount > 0 &&
              ` Already refunded: ${money(conversion.refunded_amount, conversion.currency)}.`}
          </p>
          <Field
            label="Amount to refund"
            name="amount"
            inputMode="decimal"
            value={amount}
            onChange={setAmount}
            error={refund.error}
            hint={`Empty: the whole ${money(conversion.amount, conversion.currency)}`}
          />
          <FormError error={refund.error} fields={['amount']} />
          <div className="actions">
            <button type="button" className="secondary" onClick={close}>
              Cancel
            </button>
            <button type="submit" className="danger" disabled={refund.busy}>
              Record refund
            </button>
          </div>
        </form>
      </dialog>
    </>
  );
}

const conversionColumns = (onChanged: () => void, names: AffiliateNames): Column<Conversion>[] => [
  {
    header: 'Charge',
    rowHeader: true,
    cell: (c) => (
      <>
        {c.external_id}
        {c.refunded_amount > 0 && c.status !== 'reversed' && (
          <>
            <br />
            <small className="muted">refunded {money(c.refunded_amount, c.currency)}</small>
          </>
        )}
      </>
    ),
  },
  { header: 'Customer', cell: (c) => c.customer_id ?? '—' },
  { header: 'Kind', cell: (c) => c.kind },
  { header: 'Amount', cell: (c) => money(c.amount, c.currency) },
  { header: 'Commission', cell: (c) => money(c.commission_amount, c.currency) },
  {
    header: 'Affiliate',
    cell: (c) => (
      <>
        <AffiliateLink id={c.affiliate_id} names={names} />
        {c.click_id ? <small className="muted"> · by click</small> : null}
      </>
    ),
  },
  { header: 'When', cell: (c) => dateTime(c.occurred_at) },
  { header: 'Actions', hiddenHeader: true, cell: (c) => <RefundButton conversion={c} onDone={onChanged} /> },
];

function CustomerCard({ customer, onChanged }: { customer: Customer; onChanged: (c: Customer) => void }) {
  const [status, setStatus] = useState(customer.status);
  const save = useSubmit(
    async () => data(await api.customers.update({ params: { id: customer.id }, body: { status } })).customer,
    onChanged,
  );
  const names = useAffiliateNames([customer.affiliate_id]);
  return (
    <div className="card">
      <h2>Customer {customer.customer_id}</h2>
      <dl className="facts">
        <dt>Attributed to</dt>
        <dd>
          <AffiliateLink id={customer.affiliate_id} names={names} />{' '}
          {customer.click_id ? '(by a click)' : '(by referral slug)'}
        </dd>
        <dt>E-mail</dt>
        <dd>{customer.email ?? '—'}</dd>
        <dt>First paid</dt>
        <dd>{dateTime(customer.first_conversion_at)}</dd>
        <dt>Status</dt>
        <dd>
          <Status value={customer.status} />
        </dd>
      </dl>
      <form className="inline-form" onSubmit={save.submit}>
        <Field label="Change status" name="status" error={save.error}>
          {(attrs) => (
            <select {...attrs} value={status} onChange={(e) => setStatus(e.target.value as Customer['status'])}>
              {STATUSES.map((s) => (
                <option key={s}>{s}</option>
              ))}
            </select>
          )}
        </Field>
        <button type="submit" className="secondary" disabled={save.busy || status === customer.status}>
          Save status
        </button>
        <FormError error={save.error} fields={['status']} />
      </form>
    </div>
  );
}

export function Customers() {
  const [query, setQuery] = useState('');
  const [found, setFound] = useState<{ customer?: Customer; conversions: Conversion[] }>();
  const [notFound, setNotFound] = useState<ApiError>();
  const recent = usePagedList(async (cursor) => {
    const page = data(await api.conversions.list({ query: { cursor, limit: 25 } }));
    return { items: page.conversions, next_cursor: page.next_cursor };
  }, []);

  async function find(id: string) {
    setNotFound(undefined);
    setFound(undefined);
    if (!id.trim()) return;
    const customer = await api.customers.get({ params: { id: id.trim() } });
    if (customer.status === 200) {
      const conversions = data(
        await api.conversions.list({ query: { customer_id: customer.body.data.customer.customer_id, limit: 100 } }),
      ).conversions;
      return setFound({ customer: customer.body.data.customer, conversions });
    }
    const conversion = await api.conversions.get({ params: { id: id.trim() } });
    if (conversion.status === 200) return setFound({ conversions: [conversion.body.data.conversion] });
    setNotFound(toApiError(new ApiError(404, `No customer or conversion "${id.trim()}" in this organization`)));
  }
  const search = useSubmit(() => find(query));
  const recentNames = useAffiliateNames(recent.rows?.map((c) => c.affiliate_id));
  const foundNames = useAffiliateNames(found?.conversions.map((c) => c.affiliate_id));

  return (
    <section>
      <PageHeader title="Customers and conversions">
        <ExportCsv kind="conversions" />
      </PageHeader>
      <form className="filters" role="search" onSubmit={search.submit}>
        <Field label="Your customer_id or a charge's external_id" name="id" value={query} onChange={setQuery} />
        <button type="submit" className="secondary" disabled={search.busy}>
          Find
        </button>
      </form>
      <FormError error={search.error ?? notFound} />
      {found?.customer && (
        <CustomerCard customer={found.customer} onChanged={(customer) => setFound((f) => f && { ...f, customer })} />
      )}
      {found && found.conversions.length > 0 && (
        <DataTable
          label="Conversions found"
          rows={found.conversions}
          rowKey={(c) => c.id}
          columns={conversionColumns(() => void find(query), foundNames)}
          empty={null}
        />
      )}
      {found?.customer && found.conversions.length === 0 && (
        <p className="muted">This customer has no conversion yet.</p>
      )}

      <h2>Recent conversions</h2>
      <DataTable
        label="Recent conversions"
        list={recent}
        rowKey={(c) => c.id}
        columns={conversionColumns(recent.reload, recentNames)}
        empty={
          <Empty title="No conversion yet">
            <p>
              Record sales with <code>POST /api/conversions</code> from your backend, or connect a payment provider on
              the Integrations page.
            </p>
          </Empty>
        }
      />
    </section>
  );
}
