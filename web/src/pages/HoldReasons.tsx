import type { Commission } from '@affiliate-attribution/contract';

/** What each fraud rule means, in a line, beside the API's evidence. */
const HOLD_EXPLANATIONS: Record<Commission['hold_reasons'][number]['rule'], string> = {
  self_referral:
    "The customer's e-mail is the affiliate's own, or the click came from the partner's own browser. Testing your links from your own browser does this too: release it if the sale is real.",
  disposable_email: "The customer's e-mail is at a throwaway-address domain.",
  fast_conversion: 'The sale came within 10 seconds of its click, faster than a person buys.',
};

/** Why a commission is on hold: each rule that fired, what it means, and the service's evidence. */
export function HoldReasons({ commission }: { commission: Commission }) {
  if (commission.status !== 'on_hold' || commission.hold_reasons.length === 0) return null;
  return (
    <ul className="hold-reasons">
      {commission.hold_reasons.map((r) => (
        <li key={r.rule}>
          <code>{r.rule}</code>: {HOLD_EXPLANATIONS[r.rule] ?? ''} <small className="muted">{r.detail}</small>
        </li>
      ))}
    </ul>
  );
}
