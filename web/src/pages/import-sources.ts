// The import sources the dashboard offers and the credentials each one asks for.
import type { ImportKind } from '@affiliate-attribution/contract';

export const KINDS: ImportKind[] = ['affiliates', 'customers', 'conversions', 'commissions', 'payouts'];
/** A credential the source's API asks for, as its own settings name it (docs/imports.md). */
export interface CredentialField {
  key: string;
  label: string;
  hint: string;
  secret?: boolean;
  optional?: boolean;
}

export const SOURCES = [
  {
    value: 'rewardful',
    label: 'Rewardful (API)',
    fields: [
      {
        key: 'api_secret',
        label: 'Rewardful API secret',
        hint: 'Rewardful: Company settings → API secret',
        secret: true,
      },
    ],
  },
  {
    value: 'tolt',
    label: 'Tolt (API)',
    fields: [
      { key: 'api_key', label: 'Tolt API key', hint: 'Tolt: Settings → Integrations', secret: true },
      { key: 'program_id', label: 'Tolt program id', hint: 'The prg_… program to import' },
    ],
  },
  {
    value: 'firstpromoter',
    label: 'FirstPromoter (API)',
    fields: [
      {
        key: 'api_key',
        label: 'FirstPromoter API key',
        hint: 'FirstPromoter: Settings → Integrations → Manage API keys',
        secret: true,
      },
      { key: 'account_id', label: 'FirstPromoter account id', hint: 'Shown beside the API keys' },
      {
        key: 'currency',
        label: 'Account currency (optional)',
        hint: 'e.g. USD: FirstPromoter’s commissions and payouts do not name it',
        optional: true,
      },
    ],
  },
  {
    value: 'partnerstack',
    label: 'PartnerStack (API)',
    fields: [
      { key: 'public_key', label: 'PartnerStack public key', hint: 'PartnerStack: Settings → Integrations → API keys' },
      { key: 'secret_key', label: 'PartnerStack secret key', hint: 'Beside the public key', secret: true },
    ],
  },
  {
    value: 'tapfiliate',
    label: 'Tapfiliate (API)',
    fields: [{ key: 'api_key', label: 'Tapfiliate API key', hint: 'Tapfiliate: Settings → API access', secret: true }],
  },
  { value: 'csv', label: 'CSV (any platform)', fields: [] },
] as const satisfies readonly { value: string; label: string; fields: readonly CredentialField[] }[];
export type Source = (typeof SOURCES)[number]['value'];

export interface Draft {
  source: Source;
  program_id: string;
  /** The API sources' credentials, by the source's own names. */
  fields: Record<string, string>;
  affiliates_csv: string;
  conversions_csv: string;
}

export const fieldsOf = (source: Source): readonly CredentialField[] => SOURCES.find((s) => s.value === source)!.fields;

export function credentialsOf(d: Draft): Record<string, string> {
  if (d.source === 'csv')
    return {
      affiliates_csv: d.affiliates_csv,
      ...(d.conversions_csv.trim() ? { conversions_csv: d.conversions_csv } : {}),
    };
  const out: Record<string, string> = {};
  for (const f of fieldsOf(d.source)) {
    const value = (d.fields[f.key] ?? '').trim();
    if (value || !f.optional) out[f.key] = value;
  }
  return out;
}
