import { useState } from 'react';
import { Link } from 'react-router';
import type { Affiliate, Program } from '@affiliate-attribution/contract';
import { api, data } from '../api';
import { CopyButton, Empty, Field, FormError, PageHeader, Status, date, useConfirm, useLoad, useSubmit } from '../ui';
import { DataTable, usePagedList } from '../table';
import { ExportCsv } from '../export-csv';
import { FIGURES_DAYS, FiguresCell, useAffiliateFigures } from './AffiliateFigures';

const SITE_KEY = 'dashboard.site-url';

/**
 * The landing page for programs without a website, remembered in this browser (a program's own
 * `website_url` comes first: see linkOf).
 */
export function useSiteUrl(): [string, (v: string) => void] {
  const [site, setSite] = useState(() => localStorage.getItem(SITE_KEY) ?? 'https://your-site.example');
  return [site, (v) => (localStorage.setItem(SITE_KEY, v), setSite(v))];
}

export const referralLink = (site: string, slug: string): string => {
  try {
    const url = new URL(site);
    url.searchParams.set('ref', slug);
    return url.toString();
  } catch {
    return `${site}?ref=${slug}`;
  }
};

/** A partner's referral link: on their program's website, as the portal shows it; else on the site remembered here. */
export const linkOf = (program: Pick<Program, 'website_url'> | undefined, site: string, slug: string): string =>
  referralLink(program?.website_url ?? site, slug);

/** Approve an application, disable a partner (confirmed), or enable them again. */
export function StatusActions({ affiliate, onChanged }: { affiliate: Affiliate; onChanged: () => void }) {
  const confirm = useConfirm();
  const who = affiliate.name ?? affiliate.email;
  const change = useSubmit(async (status?: 'active' | 'disabled') => {
    const reject = affiliate.status === 'pending';
    const question = reject
      ? {
          title: `Reject ${who}'s application?`,
          body: 'Their link never attributes anything (status disabled); you can still enable them later.',
          confirm: 'Reject',
        }
      : {
          title: `Disable ${who}?`,
          body: 'Their links stop attributing new visitors; customers they already referred keep earning them commissions.',
          confirm: 'Disable',
        };
    if (status === 'disabled' && !(await confirm(question))) return;
    return data(await api.affiliates.update({ params: { id: affiliate.id }, body: { status } }));
  }, onChanged);
  return (
    <span className="nowrap">
      {affiliate.status !== 'active' && (
        <button
          type="button"
          className="small"
          onClick={() => void change.submit('active')}
          disabled={change.busy}
          aria-label={`${affiliate.status === 'pending' ? 'Approve' : 'Enable'} ${who}`}
        >
          {affiliate.status === 'pending' ? 'Approve' : 'Enable'}
        </button>
      )}
      {affiliate.status !== 'disabled' && (
        <button
          type="button"
          className="danger small"
          onClick={() => void change.submit('disabled')}
          disabled={change.busy}
          aria-label={`${affiliate.status === 'pending' ? 'Reject' : 'Disable'} ${who}`}
        >
          {affiliate.status === 'pending' ? 'Reject' : 'Disable'}
        </button>
      )}
      <FormError error={change.error} />
    </span>
  );
}

function usePrograms() {
  return useLoad(async () => data(await api.programs.list({ query: { limit: 100 } })).programs, []);
}

function AddAffiliate({
  programs,
  onAdded,
  onCancel,
}: {
  programs: Program[];
  onAdded: () => void;
  onCancel: () => void;
}) {
  const [draft, setDraft] = useState({
    email: '',
    name: '',
    payout_email: '',
    slug: '',
    program_id: programs[0]?.id ?? '',
  });
  const set = (k: keyof typeof draft) => (v: string) => setDraft((d) => ({ ...d, [k]: v }));
  const add = useSubmit(
    async () =>
      data(
        await api.affiliates.create({
          body: {
            email: draft.email.trim(),
            program_id: draft.program_id,
            name: draft.name.trim() || undefined,
            payout_email: draft.payout_email.trim() || undefined,
            slug: draft.slug.trim() || undefined,
          },
        }),
      ),
    onAdded,
  );
  return (
    <form className="card form-grid" onSubmit={add.submit} noValidate aria-label="Add an affiliate">
      <h2>Add an affiliate</h2>
      <Field
        label="E-mail"
        name="email"
        type="email"
        value={draft.email}
        onChange={set('email')}
        error={add.error}
        required
      />
      <Field label="Name" name="name" value={draft.name} onChange={set('name')} error={add.error} />
      <Field
        label="Payout e-mail"
        name="payout_email"
        type="email"
        value={draft.payout_email}
        onChange={set('payout_email')}
        error={add.error}
        hint="PayPal or Wise address; empty: their e-mail"
      />
      <Field label="Program" name="program_id" error={add.error}>
        {(attrs) => (
          <select {...attrs} value={draft.program_id} onChange={(e) => set('program_id')(e.target.value)}>
            {programs.map((p) => (
              <option key={p.id} value={p.id}>
                {p.name}
              </option>
            ))}
          </select>
        )}
      </Field>
      <Field
        label="Referral slug"
        name="slug"
        value={draft.slug}
        onChange={set('slug')}
        error={add.error}
        hint="Empty: generated"
      />
      <FormError error={add.error} fields={['email', 'name', 'payout_email', 'program_id', 'slug']} />
      <div className="actions span">
        <button type="submit" disabled={add.busy}>
          Add affiliate
        </button>
        <button type="button" className="secondary" onClick={onCancel}>
          Cancel
        </button>
      </div>
    </form>
  );
}

export function Affiliates() {
  const programs = usePrograms();
  const [filter, setFilter] = useState({ email: '', program_id: '' });
  const [applied, setApplied] = useState(filter);
  const [adding, setAdding] = useState(false);
  const [site, setSite] = useSiteUrl();
  const list = usePagedList(
    async (cursor) => {
      const page = data(
        await api.affiliates.list({
          query: { cursor, email: applied.email.trim() || undefined, program_id: applied.program_id || undefined },
        }),
      );
      return { items: page.affiliates, next_cursor: page.next_cursor };
    },
    [applied],
  );
  const pages = list.pages;
  const figures = useAffiliateFigures(list.rows);
  const programOf = (id: string) => programs.data?.find((p) => p.id === id);
  const programName = (id: string) => programOf(id)?.name ?? '—';
  const everyProgramHasASite = programs.data?.every((p) => p.website_url) ?? true;
  if (programs.data?.length === 0)
    return (
      <section>
        <PageHeader title="Affiliates" />
        <Empty title="Create a program first">
          <p>
            Affiliates join a program. <Link to="/programs">Create your first program</Link>.
          </p>
        </Empty>
      </section>
    );
  return (
    <section>
      <PageHeader title="Affiliates">
        <ExportCsv kind="affiliates" />
        <button type="button" onClick={() => setAdding(true)} disabled={!programs.data}>
          Add affiliate
        </button>
      </PageHeader>
      {adding && programs.data && (
        <AddAffiliate
          programs={programs.data}
          onCancel={() => setAdding(false)}
          onAdded={() => {
            setAdding(false);
            list.reload();
          }}
        />
      )}
      <form
        className="filters"
        role="search"
        onSubmit={(e) => {
          e.preventDefault();
          pages.reset();
          setApplied(filter);
        }}
      >
        <Field
          label="E-mail"
          name="email"
          type="email"
          value={filter.email}
          onChange={(v) => setFilter((f) => ({ ...f, email: v }))}
          error={list.error}
        />
        <Field label="Program" name="program_id" error={list.error}>
          {(attrs) => (
            <select
              {...attrs}
              value={filter.program_id}
              onChange={(e) => setFilter((f) => ({ ...f, program_id: e.target.value }))}
            >
              <option value="">All programs</option>
              {programs.data?.map((p) => (
                <option key={p.id} value={p.id}>
                  {p.name}
                </option>
              ))}
            </select>
          )}
        </Field>
        <button type="submit" className="secondary">
          Search
        </button>
        {!everyProgramHasASite && (
          <Field
            label="Your site (for programs without a website)"
            name="site"
            value={site}
            onChange={setSite}
            hint="Or set the program's website on the Programs page"
          />
        )}
      </form>
      <DataTable
        label="Affiliates"
        list={list}
        errorFields={['email', 'program_id']}
        rowKey={(a) => a.id}
        empty={
          <Empty title={applied.email || applied.program_id ? 'No affiliate matches' : 'No affiliate yet'}>
            <p>Add a partner: they get a referral link to share, and every sale it brings earns them a commission.</p>
          </Empty>
        }
        columns={[
          {
            header: 'Affiliate',
            rowHeader: true,
            cell: (a) => (
              <>
                <Link to={`/affiliates/${a.id}`}>{a.name ?? a.email}</Link>
                {a.name && (
                  <>
                    <br />
                    <small className="muted">{a.email}</small>
                  </>
                )}
              </>
            ),
          },
          { header: 'Program', cell: (a) => programName(a.program_id) },
          { header: 'Status', cell: (a) => <Status value={a.status} /> },
          {
            header: `Last ${FIGURES_DAYS} days`,
            className: 'figures-cell',
            cell: (a) => <FiguresCell affiliateId={a.id} figures={figures} />,
          },
          {
            header: 'Referral link',
            className: 'link',
            cell: (a) => (
              <>
                <code>?ref={a.slug}</code>{' '}
                <CopyButton text={linkOf(programOf(a.program_id), site, a.slug)} label="Copy link" />
              </>
            ),
          },
          { header: 'Since', className: 'date', cell: (a) => date(a.created_at) },
          {
            header: 'Actions',
            hiddenHeader: true,
            cell: (a) => <StatusActions affiliate={a} onChanged={list.reload} />,
          },
        ]}
      />
    </section>
  );
}
