import { useState } from 'react';
import { Link } from 'react-router';
import type { Coupon, Program } from '@affiliate-attribution/contract';
import { api, ApiError, data } from '../api';
import { Empty, Field, FormError, PageHeader, date, useConfirm, useLoad, useSubmit } from '../ui';
import { DataTable, usePagedList } from '../table';
import { AffiliateLink, useAffiliateNames } from './AffiliateName';

/**
 * The affiliate a new code belongs to, found by e-mail (and program, for a partner in several):
 * errors name the form's field, as the API's own do.
 */
async function membershipOf(email: string, programId: string): Promise<string> {
  if (!email) throw new ApiError(400, 'affiliate_email: Required');
  const found = data(
    await api.affiliates.list({ query: { email, program_id: programId || undefined, limit: 10 } }),
  ).affiliates;
  if (found.length === 0)
    throw new ApiError(
      404,
      `affiliate_email: No affiliate with this e-mail${programId ? ' in that program' : ''}: add them on the Affiliates page first`,
    );
  if (found.length > 1) throw new ApiError(400, 'program_id: This partner is in several programs: choose one');
  return found[0].id;
}

function AddCoupon({
  programs,
  onAdded,
  onCancel,
}: {
  programs: Program[];
  onAdded: () => void;
  onCancel: () => void;
}) {
  const [draft, setDraft] = useState({ code: '', affiliate_email: '', program_id: '' });
  const set = (k: keyof typeof draft) => (v: string) => setDraft((d) => ({ ...d, [k]: v }));
  const add = useSubmit(async () => {
    const affiliateId = await membershipOf(draft.affiliate_email.trim(), draft.program_id);
    return data(await api.coupons.create({ body: { code: draft.code, affiliate_id: affiliateId } }));
  }, onAdded);
  return (
    <form className="card form-grid" onSubmit={add.submit} noValidate aria-label="Add a coupon">
      <h2>Add a coupon</h2>
      <Field
        label="Code"
        name="code"
        value={draft.code}
        onChange={set('code')}
        error={add.error}
        hint="As customers type it (any case)"
        required
      />
      <Field
        label="Affiliate e-mail"
        name="affiliate_email"
        type="email"
        value={draft.affiliate_email}
        onChange={set('affiliate_email')}
        error={add.error}
        required
      />
      {programs.length > 1 && (
        <Field label="Program" name="program_id" error={add.error}>
          {(attrs) => (
            <select {...attrs} value={draft.program_id} onChange={(e) => set('program_id')(e.target.value)}>
              <option value="">Their only program</option>
              {programs.map((p) => (
                <option key={p.id} value={p.id}>
                  {p.name}
                </option>
              ))}
            </select>
          )}
        </Field>
      )}
      <FormError error={add.error} fields={['code', 'affiliate_email', 'program_id']} />
      <div className="actions span">
        <button type="submit" disabled={add.busy}>
          Add coupon
        </button>
        <button type="button" className="secondary" onClick={onCancel}>
          Cancel
        </button>
      </div>
    </form>
  );
}

function Deactivate({ coupon, onDone }: { coupon: Coupon; onDone: () => void }) {
  const confirm = useConfirm();
  const remove = useSubmit(
    async () => {
      const ok = await confirm({
        title: `Deactivate ${coupon.code}?`,
        body: 'Sales with this code are no longer attributed to the affiliate from now on; those already attributed stay. The code can be given again later.',
        confirm: 'Deactivate',
      });
      if (ok) data(await api.coupons.delete({ params: { id: coupon.id } }));
      return ok;
    },
    (ok) => ok && onDone(),
  );
  return (
    <>
      <button
        type="button"
        className="secondary small"
        onClick={() => void remove.submit()}
        disabled={remove.busy}
        aria-label={`Deactivate ${coupon.code}`}
      >
        Deactivate
      </button>
      <FormError error={remove.error} />
    </>
  );
}

/** Promotion codes that attribute a sale to an affiliate: list, add, deactivate (GET/POST/DELETE /api/coupons). */
export function Coupons() {
  const programs = useLoad(async () => data(await api.programs.list({ query: { limit: 100 } })).programs, []);
  const [adding, setAdding] = useState(false);
  const list = usePagedList(async (cursor) => {
    const page = data(await api.coupons.list({ query: { cursor } }));
    return { items: page.coupons, next_cursor: page.next_cursor };
  }, []);
  const names = useAffiliateNames(list.rows?.map((c) => c.affiliate_id));
  const programName = (id: string) => programs.data?.find((p) => p.id === id)?.name ?? '—';
  if (programs.data?.length === 0)
    return (
      <section>
        <PageHeader title="Coupons" />
        <Empty title="Create a program first">
          <p>
            A coupon belongs to an affiliate of a program. <Link to="/programs">Create your first program</Link>.
          </p>
        </Empty>
      </section>
    );
  return (
    <section>
      <PageHeader title="Coupons">
        <button type="button" onClick={() => setAdding(true)} disabled={!programs.data}>
          Add coupon
        </button>
      </PageHeader>
      <p className="muted">
        A sale or signup reported with a code (<code>coupon</code> on the API, or the discount code of a payment a
        connected provider reports) is attributed to the code&apos;s affiliate when no link or cookie attributes it.
      </p>
      {adding && programs.data && (
        <AddCoupon
          programs={programs.data}
          onCancel={() => setAdding(false)}
          onAdded={() => {
            setAdding(false);
            list.reload();
          }}
        />
      )}
      <DataTable
        label="Coupons"
        list={list}
        rowKey={(c) => c.id}
        empty={
          <Empty title="No coupon yet">
            <p>Give a partner a code their audience types at checkout: every sale with it earns them a commission.</p>
          </Empty>
        }
        columns={[
          { header: 'Code', rowHeader: true, cell: (c) => <code>{c.code}</code> },
          { header: 'Affiliate', cell: (c) => <AffiliateLink id={c.affiliate_id} names={names} /> },
          { header: 'Program', cell: (c) => programName(c.program_id) },
          { header: 'Created', className: 'nowrap', cell: (c) => date(c.created_at) },
          {
            header: 'Actions',
            hiddenHeader: true,
            cell: (c) => <Deactivate coupon={c} onDone={list.reload} />,
          },
        ]}
      />
    </section>
  );
}
