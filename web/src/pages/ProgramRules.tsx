import type { Program } from '@affiliate-attribution/contract';
import type { ApiError } from '../api';
import { Field } from '../ui';

/**
 * A program's rules (spec: "Program rules and fraud signals"), as the program form edits them
 * (pages/Programs.tsx): attribution model, the cap by count, tiers and fraud rules.
 */
type FraudRules = Program['fraud_rules'];
type TierDraft = { from: string; commission_value: string };
export type RulesDraft = {
  attribution_model: Program['attribution_model'];
  commission_max_conversions: string;
  tier_metric: 'customers' | 'revenue';
  tiers: TierDraft[];
  fraud_rules: FraudRules;
};

const DEFAULT_FRAUD_RULES: FraudRules = {
  self_referral: true,
  disposable_email: true,
  click_flood: true,
  fast_conversion: false,
};

export const rulesDraftOf = (p?: Program): RulesDraft => ({
  attribution_model: p?.attribution_model ?? 'last_click',
  commission_max_conversions: p?.commission_max_conversions == null ? '' : String(p.commission_max_conversions),
  tier_metric: p?.commission_tiers?.metric ?? 'customers',
  tiers: (p?.commission_tiers?.tiers ?? []).map((t) => ({
    from: String(t.from),
    commission_value: String(t.commission_value),
  })),
  fraud_rules: p?.fraud_rules ?? DEFAULT_FRAUD_RULES,
});

/** Numbers as typed: the API validates them and its message lands next to the field. */
const num = (v: string): number => (v.trim() === '' ? NaN : Number(v));

export const rulesBodyOf = (d: RulesDraft) => ({
  attribution_model: d.attribution_model,
  commission_max_conversions: d.commission_max_conversions.trim() === '' ? null : num(d.commission_max_conversions),
  commission_tiers:
    d.tiers.length === 0
      ? null
      : {
          metric: d.tier_metric,
          tiers: d.tiers.map((t) => ({ from: num(t.from), commission_value: num(t.commission_value) })),
        },
  fraud_rules: d.fraud_rules,
});

/** The fields whose errors show next to them (a tier's error, naming `commission_tiers.tiers.N`, shows above the buttons). */
export const RULES_FIELDS = ['attribution_model', 'commission_max_conversions'];

const FRAUD_RULE_LABELS: Record<keyof FraudRules, { label: string; short: string }> = {
  self_referral: {
    label:
      "Hold self-referrals (the customer's e-mail is the partner's, or the click came from the partner's own browser)",
    short: 'self-referral',
  },
  disposable_email: { label: 'Hold disposable e-mail addresses', short: 'disposable e-mail' },
  click_flood: {
    label: 'Suppress click floods (over 10 clicks a minute from one address on one link)',
    short: 'click flood',
  },
  fast_conversion: { label: 'Hold sales within 10 seconds of their click', short: 'fast conversion' },
};

/** The rules in a line, for the programs table. */
export function rulesSummary(p: Program): string {
  const parts = [p.attribution_model === 'first_click' ? 'first click' : 'last click'];
  if (p.commission_max_conversions !== null)
    parts.push(`${p.commission_max_conversions} paid conversions per customer`);
  if (p.commission_tiers)
    parts.push(
      `${p.commission_tiers.tiers.length} tier${p.commission_tiers.tiers.length > 1 ? 's' : ''} by ${p.commission_tiers.metric}`,
    );
  const fraud = (Object.keys(FRAUD_RULE_LABELS) as (keyof FraudRules)[])
    .filter((r) => p.fraud_rules[r])
    .map((r) => FRAUD_RULE_LABELS[r].short);
  parts.push(fraud.length > 0 ? `fraud checks: ${fraud.join(', ')}` : 'no fraud checks');
  return parts.join(' · ');
}

export function RulesFields({
  draft,
  onChange,
  error,
  percent,
}: {
  draft: RulesDraft;
  onChange: (d: RulesDraft) => void;
  error?: ApiError;
  percent: boolean;
}) {
  const setTier = (i: number, k: keyof TierDraft, v: string) =>
    onChange({ ...draft, tiers: draft.tiers.map((t, j) => (j === i ? { ...t, [k]: v } : t)) });
  return (
    <>
      <h3 className="span">Rules</h3>
      <Field
        label="Attribution"
        name="attribution_model"
        error={error}
        hint="Which partner keeps a visitor who came through two links"
      >
        {(attrs) => (
          <select
            {...attrs}
            value={draft.attribution_model}
            onChange={(e) =>
              onChange({ ...draft, attribution_model: e.target.value as RulesDraft['attribution_model'] })
            }
          >
            <option value="last_click">Last click: the latest link wins</option>
            <option value="first_click">First click: the first link keeps them</option>
          </select>
        )}
      </Field>
      <Field
        label="Paid conversions per customer"
        name="commission_max_conversions"
        inputMode="numeric"
        value={draft.commission_max_conversions}
        onChange={(v) => onChange({ ...draft, commission_max_conversions: v })}
        error={error}
        hint="Empty: no cap (the commission window still applies)"
      />
      <fieldset className="field span tiers">
        <legend>Tiers</legend>
        <p className="hint">
          A partner's previous calendar month picks the highest tier they reached; below every tier, the program's
          commission.
        </p>
        {draft.tiers.length > 0 && (
          <Field label="Tiers by" name="tier_metric">
            {(attrs) => (
              <select
                {...attrs}
                value={draft.tier_metric}
                onChange={(e) => onChange({ ...draft, tier_metric: e.target.value as RulesDraft['tier_metric'] })}
              >
                <option value="customers">Customers with a paid conversion</option>
                <option value="revenue">Revenue (gross, in the program's currency)</option>
              </select>
            )}
          </Field>
        )}
        {draft.tiers.map((t, i) => (
          <div className="tier" key={i}>
            <Field
              label={`From (tier ${i + 1})`}
              name={`tier_from_${i}`}
              inputMode="decimal"
              value={t.from}
              onChange={(v) => setTier(i, 'from', v)}
            />
            <Field
              label={`Rate (tier ${i + 1})`}
              name={`tier_rate_${i}`}
              inputMode="decimal"
              value={t.commission_value}
              onChange={(v) => setTier(i, 'commission_value', v)}
              hint={percent ? '%' : 'flat amount'}
            />
            <button
              type="button"
              className="secondary small"
              onClick={() => onChange({ ...draft, tiers: draft.tiers.filter((_, j) => j !== i) })}
              aria-label={`Remove tier ${i + 1}`}
            >
              Remove
            </button>
          </div>
        ))}
        <button
          type="button"
          className="secondary small"
          onClick={() => onChange({ ...draft, tiers: [...draft.tiers, { from: '', commission_value: '' }] })}
        >
          Add a tier
        </button>
      </fieldset>
      <fieldset className="field span">
        <legend>Fraud rules</legend>
        {(Object.keys(FRAUD_RULE_LABELS) as (keyof FraudRules)[]).map((rule) => (
          <label key={rule} className="check-line">
            <input
              type="checkbox"
              checked={draft.fraud_rules[rule]}
              onChange={(e) => onChange({ ...draft, fraud_rules: { ...draft.fraud_rules, [rule]: e.target.checked } })}
            />{' '}
            {FRAUD_RULE_LABELS[rule].label}
          </label>
        ))}
        <p className="hint">
          A held commission waits on the Commissions page, with its reason, to be released or rejected.
        </p>
      </fieldset>
    </>
  );
}
