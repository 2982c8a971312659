import { useState } from 'react';
import type { Program } from '@affiliate-attribution/contract';
import { api, data } from '../api';
import {
  JOINING_FIELDS,
  JoiningFields,
  joiningBodyOf,
  joiningDraftOf,
  type JoiningDraft,
} from '../partners/ProgramJoining';
import { Empty, Field, FormError, PageHeader, money, useSubmit } from '../ui';
import { DataTable, usePagedList } from '../table';
import { RULES_FIELDS, RulesFields, rulesBodyOf, rulesDraftOf, rulesSummary, type RulesDraft } from './ProgramRules';

const FIELDS = [
  'name',
  'commission_type',
  'commission_value',
  'click_window_days',
  'commission_window_months',
  'currency',
  'hold_days',
  'auto_approve',
  'minimum_payout',
  ...JOINING_FIELDS,
  ...RULES_FIELDS,
];

type Draft = Record<
  | 'name'
  | 'commission_type'
  | 'commission_value'
  | 'click_window_days'
  | 'commission_window_months'
  | 'currency'
  | 'hold_days'
  | 'minimum_payout',
  string
> & { auto_approve: boolean } & JoiningDraft & { rules: RulesDraft };

const blank: Draft = {
  name: '',
  commission_type: 'percent',
  commission_value: '',
  click_window_days: '60',
  commission_window_months: '',
  currency: 'USD',
  hold_days: '30',
  auto_approve: true,
  minimum_payout: '0',
  ...joiningDraftOf(),
  rules: rulesDraftOf(),
};

const draftOf = (p: Program): Draft => ({
  name: p.name,
  commission_type: p.commission_type,
  commission_value: String(p.commission_value),
  click_window_days: String(p.click_window_days),
  commission_window_months: p.commission_window_months === null ? '' : String(p.commission_window_months),
  currency: p.currency,
  hold_days: String(p.hold_days),
  auto_approve: p.auto_approve,
  minimum_payout: String(p.minimum_payout),
  ...joiningDraftOf(p),
  rules: rulesDraftOf(p),
});

/** Numbers as typed: the API validates them and its message lands next to the field. */
const num = (v: string): number => (v.trim() === '' ? NaN : Number(v));

function bodyOf(d: Draft) {
  return {
    name: d.name,
    commission_type: d.commission_type as 'percent' | 'flat',
    commission_value: num(d.commission_value),
    click_window_days: num(d.click_window_days),
    commission_window_months: d.commission_window_months.trim() === '' ? null : num(d.commission_window_months),
    currency: d.currency.trim().toUpperCase(),
    hold_days: num(d.hold_days),
    auto_approve: d.auto_approve,
    minimum_payout: num(d.minimum_payout),
    ...joiningBodyOf(d),
    ...rulesBodyOf(d.rules),
  };
}

export function ProgramForm({
  program,
  onSaved,
  onCancel,
}: {
  program?: Program;
  onSaved: (p: Program) => void;
  onCancel?: () => void;
}) {
  const [draft, setDraft] = useState<Draft>(program ? draftOf(program) : blank);
  const set = (k: keyof Draft) => (v: string) => setDraft((d) => ({ ...d, [k]: v }));
  const save = useSubmit(async () => {
    const body = bodyOf(draft);
    return data(
      program ? await api.programs.update({ params: { id: program.id }, body }) : await api.programs.create({ body }),
    ).program;
  }, onSaved);
  const e = save.error;
  return (
    <form
      className="card form-grid"
      onSubmit={save.submit}
      noValidate
      aria-label={program ? `Edit ${program.name}` : 'New program'}
    >
      <h2>{program ? `Edit ${program.name}` : 'New program'}</h2>
      <Field label="Name" name="name" value={draft.name} onChange={set('name')} error={e} required />
      <Field label="Commission type" name="commission_type" error={e}>
        {(attrs) => (
          <select {...attrs} value={draft.commission_type} onChange={(ev) => set('commission_type')(ev.target.value)}>
            <option value="percent">Percent of each sale</option>
            <option value="flat">Flat amount per paid conversion</option>
          </select>
        )}
      </Field>
      <Field
        label={draft.commission_type === 'percent' ? 'Commission (%)' : 'Commission (amount)'}
        name="commission_value"
        inputMode="decimal"
        value={draft.commission_value}
        onChange={set('commission_value')}
        error={e}
        required
      />
      <Field
        label="Currency"
        name="currency"
        value={draft.currency}
        onChange={set('currency')}
        error={e}
        hint="ISO 4217, e.g. USD, EUR"
      />
      <Field
        label="Click window (days)"
        name="click_window_days"
        inputMode="numeric"
        value={draft.click_window_days}
        onChange={set('click_window_days')}
        error={e}
      />
      <Field
        label="Commission window (months)"
        name="commission_window_months"
        inputMode="numeric"
        value={draft.commission_window_months}
        onChange={set('commission_window_months')}
        error={e}
        hint="Empty: lifetime"
      />
      <Field
        label="Hold (days)"
        name="hold_days"
        inputMode="numeric"
        value={draft.hold_days}
        onChange={set('hold_days')}
        error={e}
        hint="Before a commission is approved"
      />
      <Field
        label="Minimum payout"
        name="minimum_payout"
        inputMode="decimal"
        value={draft.minimum_payout}
        onChange={set('minimum_payout')}
        error={e}
      />
      <div className="field checkbox">
        <label>
          <input
            type="checkbox"
            checked={draft.auto_approve}
            onChange={(ev) => setDraft((d) => ({ ...d, auto_approve: ev.target.checked }))}
          />{' '}
          Approve commissions automatically when their hold ends
        </label>
      </div>
      <JoiningFields draft={draft} set={set} error={e} program={program} />
      <RulesFields
        draft={draft.rules}
        onChange={(rules) => setDraft((d) => ({ ...d, rules }))}
        error={e}
        percent={draft.commission_type === 'percent'}
      />
      <FormError error={e} fields={FIELDS} />
      <div className="actions span">
        <button type="submit" disabled={save.busy}>
          {program ? 'Save changes' : 'Create program'}
        </button>
        {onCancel && (
          <button type="button" className="secondary" onClick={onCancel}>
            Cancel
          </button>
        )}
      </div>
    </form>
  );
}

const rule = (p: Program) =>
  p.commission_type === 'percent' ? `${p.commission_value} %` : `${money(p.commission_value, p.currency)} flat`;

export function Programs() {
  const list = usePagedList(async (cursor) => {
    const page = data(await api.programs.list({ query: { cursor } }));
    return { items: page.programs, next_cursor: page.next_cursor };
  }, []);
  const [editing, setEditing] = useState<Program | 'new'>();
  return (
    <section>
      <PageHeader title="Programs">
        <button type="button" onClick={() => setEditing('new')}>
          New program
        </button>
      </PageHeader>
      {editing && (
        <ProgramForm
          key={editing === 'new' ? 'new' : editing.id}
          program={editing === 'new' ? undefined : editing}
          onCancel={() => setEditing(undefined)}
          onSaved={() => {
            setEditing(undefined);
            list.reload();
          }}
        />
      )}
      <DataTable
        label="Programs"
        list={list}
        rowKey={(p) => p.id}
        empty={
          !editing && (
            <Empty title="No program yet">
              <p>A program sets what partners earn: create one, then add affiliates to it.</p>
            </Empty>
          )
        }
        columns={[
          { header: 'Name', rowHeader: true, cell: (p) => p.name },
          { header: 'Commission', cell: rule },
          { header: 'Click window', cell: (p) => `${p.click_window_days} days` },
          {
            header: 'Commission window',
            cell: (p) => (p.commission_window_months === null ? 'lifetime' : `${p.commission_window_months} months`),
          },
          { header: 'Hold', cell: (p) => `${p.hold_days} days${p.auto_approve ? '' : ', manual approval'}` },
          { header: 'Minimum payout', cell: (p) => money(p.minimum_payout, p.currency) },
          { header: 'Rules', className: 'rules', cell: rulesSummary },
          {
            header: 'Actions',
            hiddenHeader: true,
            cell: (p) => (
              <button
                type="button"
                className="secondary small"
                onClick={() => setEditing(p)}
                aria-label={`Edit ${p.name}`}
              >
                Edit
              </button>
            ),
          },
        ]}
      />
    </section>
  );
}
