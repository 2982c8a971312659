import { useEffect, useState } from 'react';
import type { Import, ImportTermsChoice } from '@affiliate-attribution/contract';
import { api, data } from '../api';
import { DataTable } from '../table';
import { Empty, Field, FormError, PageHeader, Status, dateTime, useConfirm, useLoad, useSubmit } from '../ui';
import { KINDS, SOURCES, credentialsOf, fieldsOf, type Draft } from './import-sources';

/** Follows an import until it ends: the API's figures, polled once a second while it runs. */
function useFollowed(started: Import | undefined): Import | undefined {
  const [current, setCurrent] = useState(started);
  useEffect(() => {
    setCurrent(started);
    if (!started) return;
    let live = true;
    let timer: ReturnType<typeof setTimeout>;
    const poll = async () => {
      const found = data(await api.imports.get({ params: { id: started.id } })).import;
      if (!live) return;
      setCurrent(found);
      if (found.status === 'running') timer = setTimeout(() => void poll().catch(() => undefined), 1000);
    };
    timer = setTimeout(() => void poll().catch(() => undefined), 500);
    return () => {
      live = false;
      clearTimeout(timer);
    };
  }, [started]);
  return current;
}

/** What a running import is doing now: reading, or waiting to try its source again (and why). */
function runningText(item: Import): string {
  const retry = item.progress.retry;
  if (retry)
    return `${retry.reason}: trying again at ${dateTime(retry.at)} (try ${retry.attempt} of ${retry.max_attempts}) · ${item.progress.pages} pages so far`;
  if (item.progress.phase === 'queued') return 'Waiting to start (an organization’s imports run one at a time)';
  return `Reading ${item.progress.phase} … ${item.progress.pages} pages so far`;
}

function ImportReport({
  item,
  onRun,
  onCancel,
  busy,
}: {
  item: Import;
  onRun?: (terms?: ImportTermsChoice) => void;
  onCancel?: () => void;
  busy: boolean;
}) {
  const running = item.status === 'running';
  return (
    <section className="card" aria-label={item.dry_run ? 'Dry run' : 'Import'} aria-live="polite">
      <h2>
        {item.dry_run ? 'Dry run' : 'Import'} from {item.source} <Status value={item.status} />
      </h2>
      <p className="muted">
        {running
          ? runningText(item)
          : item.status === 'undone'
            ? `${item.progress.pages} pages read · undone ${dateTime(item.undone_at)}: what it created was removed`
            : `${item.progress.pages} pages read · ${item.status === 'cancelled' ? 'cancelled' : 'finished'} ${dateTime(item.finished_at)}`}
      </p>
      {item.error && !item.progress.retry && (
        <p className="error" role="alert">
          {item.error}
        </p>
      )}
      <DataTable
        label={item.dry_run ? 'What the import would do' : 'What the import did'}
        rowKey={(kind) => kind}
        rows={KINDS}
        empty={null}
        columns={[
          { header: 'Kind', rowHeader: true, cell: (kind) => kind },
          { header: item.dry_run ? 'Would create' : 'Created', cell: (kind) => item.counts[kind]?.created ?? 0 },
          { header: 'Already here', cell: (kind) => item.counts[kind]?.already_present ?? 0 },
          { header: 'Skipped', cell: (kind) => item.counts[kind]?.skipped ?? 0 },
        ]}
      />
      {item.skipped.length > 0 && (
        <>
          <h3>{item.dry_run ? 'What would be skipped, and why' : 'What was skipped, and why'}</h3>
          <DataTable
            label="Skipped rows"
            rowKey={(s) => `${s.kind}/${s.source_id}/${s.reason}`}
            rows={item.skipped}
            empty={null}
            columns={[
              { header: 'Kind', rowHeader: true, cell: (s) => s.kind },
              { header: 'Source id', cell: (s) => <code>{s.source_id}</code> },
              { header: 'Reason', cell: (s) => s.reason },
            ]}
          />
        </>
      )}
      <TermsReport item={item} />
      {onCancel && running && (
        <div className="actions">
          <button type="button" className="danger" onClick={onCancel} disabled={busy}>
            Cancel import
          </button>
        </div>
      )}
      {onRun && item.dry_run && item.status === 'succeeded' && (
        <div className="actions">
          {item.terms?.differences.length ? (
            <>
              <button type="button" onClick={() => onRun('source')} disabled={busy}>
                Run the import, taking {item.source}’s terms
              </button>
              <button type="button" className="secondary" onClick={() => onRun('program')} disabled={busy}>
                Run the import, keeping the program’s terms
              </button>
            </>
          ) : (
            <button type="button" onClick={() => onRun()} disabled={busy}>
              Run the import
            </button>
          )}
        </div>
      )}
    </section>
  );
}

/** The source's campaign terms against the program's: what differs, and which terms a run went on with. */
function TermsReport({ item }: { item: Import }) {
  const terms = item.terms;
  if (!terms) return null;
  return (
    <>
      {terms.differences.length > 0 && (
        <>
          <h3>Campaign terms that differ from the program’s</h3>
          <p className="muted">
            {item.dry_run
              ? 'Imported customers’ renewals earn the program’s terms. Choose below: the program takes the source’s terms, or keeps its own.'
              : terms.applied === 'source'
                ? `The program took ${item.source}’s terms.`
                : terms.applied === 'program'
                  ? 'The program kept its own terms: imported customers’ renewals earn them.'
                  : 'Choose which terms apply, then start the import again.'}
          </p>
          <DataTable
            label="Campaign terms"
            rowKey={(d) => `${d.campaign}/${d.field}`}
            rows={terms.differences}
            empty={null}
            columns={[
              { header: 'Campaign', rowHeader: true, cell: (d) => d.campaign },
              { header: 'Term', cell: (d) => d.field },
              { header: `At ${item.source}`, cell: (d) => d.source ?? 'none' },
              { header: 'In the program', cell: (d) => d.program ?? 'none' },
            ]}
          />
        </>
      )}
      {!terms.read && <p className="muted">{item.source} does not give its campaign terms: check the program’s.</p>}
    </>
  );
}

export function Imports() {
  const programs = useLoad(async () => data(await api.programs.list({ query: { limit: 100 } })).programs, []);
  const history = useLoad(async () => data(await api.imports.list({ query: { limit: 20 } })).imports, []);
  const [draft, setDraft] = useState<Draft>({
    source: 'rewardful',
    program_id: '',
    fields: {},
    affiliates_csv: '',
    conversions_csv: '',
  });
  const [started, setStarted] = useState<Import>();
  const current = useFollowed(started);
  const confirm = useConfirm();
  const programId = draft.program_id || programs.data?.[0]?.id || '';
  const set = (k: Exclude<keyof Draft, 'fields'>) => (v: string) => setDraft((d) => ({ ...d, [k]: v }));
  const setField = (k: string) => (v: string) => setDraft((d) => ({ ...d, fields: { ...d.fields, [k]: v } }));
  const start = useSubmit(
    async (run?: { dry_run: boolean; terms?: ImportTermsChoice }) =>
      data(
        await api.imports.create({
          body: {
            source: draft.source,
            credentials: credentialsOf(draft),
            program_id: programId,
            dry_run: run?.dry_run ?? true,
            ...(run?.terms ? { terms: run.terms } : {}),
          },
        }),
      ).import,
    (item) => {
      setStarted(item);
      history.reload();
    },
  );
  useEffect(() => {
    if (current && current.status !== 'running') history.reload();
    // eslint-disable-next-line react-hooks/exhaustive-deps -- reload the history when the import's status changes, not on every new `current` object the poll returns
  }, [current?.status]);
  const undo = async (item: Import) => {
    if (
      !(await confirm({
        title: 'Undo this import?',
        body: 'Every partner, customer, conversion, commission and payout it created is deleted. Refused once anything was built on them.',
        confirm: 'Undo import',
      }))
    )
      return;
    try {
      const undone = data(await api.imports.remove({ params: { id: item.id } })).import;
      if (started?.id === item.id) setStarted(undone);
    } catch (err) {
      start.setError(err as never);
    }
    history.reload();
  };
  const cancel = async (item: Import) => {
    if (
      !(await confirm({
        title: 'Cancel this import?',
        body: 'It stops before its next page. What it has imported so far stays; Undo removes it.',
        confirm: 'Cancel import',
      }))
    )
      return;
    try {
      const cancelled = data(await api.imports.cancel({ params: { id: item.id } })).import;
      if (started?.id === item.id) setStarted(cancelled);
    } catch (err) {
      start.setError(err as never);
    }
    history.reload();
  };
  const e = start.error;
  return (
    <section>
      <PageHeader title="Imports" />
      <form
        className="card form-grid"
        aria-label="New import"
        noValidate
        onSubmit={(ev) => {
          ev.preventDefault();
          void start.submit({ dry_run: true });
        }}
      >
        <h2>Bring a program from another platform</h2>
        <p className="muted span">
          Partners, their links, customers, conversions, commissions and paid payouts come along in their original
          currency. Imported history sends no e-mails and no webhooks. Start with a dry run: it writes nothing.
        </p>
        <Field label="Source" name="source" error={e}>
          {(attrs) => (
            <select {...attrs} value={draft.source} onChange={(ev) => set('source')(ev.target.value)}>
              {SOURCES.map((s) => (
                <option key={s.value} value={s.value}>
                  {s.label}
                </option>
              ))}
            </select>
          )}
        </Field>
        <Field label="Into program" name="program_id" error={e}>
          {(attrs) => (
            <select {...attrs} value={programId} onChange={(ev) => set('program_id')(ev.target.value)}>
              {(programs.data ?? []).map((p) => (
                <option key={p.id} value={p.id}>
                  {p.name}
                </option>
              ))}
            </select>
          )}
        </Field>
        {draft.source !== 'csv' ? (
          fieldsOf(draft.source).map((f) => (
            <Field
              key={`${draft.source}.${f.key}`}
              label={f.label}
              name={`credentials.${f.key}`}
              type={f.secret ? 'password' : 'text'}
              autoComplete="off"
              value={draft.fields[f.key] ?? ''}
              onChange={setField(f.key)}
              error={e}
              hint={f.hint}
            />
          ))
        ) : (
          <>
            <Field
              label="Affiliates CSV"
              name="credentials.affiliates_csv"
              error={e}
              hint="id,email,first_name,last_name,status,payout_email,tokens"
            >
              {(attrs) => (
                <textarea
                  {...attrs}
                  rows={4}
                  value={draft.affiliates_csv}
                  onChange={(ev) => set('affiliates_csv')(ev.target.value)}
                />
              )}
            </Field>
            <Field
              label="Conversions CSV (optional)"
              name="credentials.conversions_csv"
              error={e}
              hint="id,affiliate_id,customer_id,customer_email,amount,currency,occurred_at,commission_amount,commission_status"
            >
              {(attrs) => (
                <textarea
                  {...attrs}
                  rows={4}
                  value={draft.conversions_csv}
                  onChange={(ev) => set('conversions_csv')(ev.target.value)}
                />
              )}
            </Field>
          </>
        )}
        <FormError
          error={e}
          fields={[
            'source',
            'program_id',
            ...fieldsOf(draft.source).map((f) => `credentials.${f.key}`),
            'credentials.affiliates_csv',
            'credentials.conversions_csv',
          ]}
        />
        <div className="actions span">
          <button type="submit" disabled={start.busy || !programId}>
            Dry run
          </button>
        </div>
      </form>
      {current && (
        <ImportReport
          item={current}
          busy={start.busy}
          onRun={(terms) => void start.submit({ dry_run: false, terms })}
          onCancel={() => void cancel(current)}
        />
      )}
      <h2>Past imports</h2>
      <DataTable
        label="Past imports"
        rowKey={(i) => i.id}
        rows={history.data}
        loading={history.loading}
        error={history.error}
        empty={<Empty title="No imports yet">Start with a dry run above.</Empty>}
        columns={[
          { header: 'Started', rowHeader: true, cell: (i) => dateTime(i.created_at) },
          { header: 'Source', cell: (i) => `${i.source}${i.dry_run ? ' (dry run)' : ''}` },
          { header: 'Status', cell: (i) => <Status value={i.status} /> },
          {
            header: 'Created',
            cell: (i) =>
              `${i.dry_run ? 'would create ' : i.status === 'undone' ? 'had created ' : ''}${KINDS.map((k) => `${i.counts[k]?.created ?? 0} ${k}`).join(', ')}`,
          },
          {
            header: 'Actions',
            hiddenHeader: true,
            cell: (i) => (
              <span className="actions">
                <button type="button" className="link small" onClick={() => setStarted(i)}>
                  Details
                </button>
                {i.status === 'running' && (
                  <button type="button" className="danger small" onClick={() => void cancel(i)}>
                    Cancel import
                  </button>
                )}
                {i.status !== 'running' && i.status !== 'undone' && !i.dry_run && (
                  <button type="button" className="danger small" onClick={() => void undo(i)}>
                    Undo
                  </button>
                )}
              </span>
            ),
          },
        ]}
      />
    </section>
  );
}
