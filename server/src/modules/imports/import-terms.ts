import type { ImportTerms, ImportTermsChoice } from '@affiliate-attribution/contract';
import { notifyChange } from '../../db/change-notifications.js';
import type { Db } from '../../db/sql.js';
import { ImportSourceError, type SourceTerms } from './import-model.js';
import { sql } from 'kysely';

/**
 * A source's campaign terms against the program's (shared/spec/imports.md; issue 47 item 5). An
 * import brings history as it was; what it cannot bring is the rule future sales earn by: a renewal
 * of an imported customer earns the program's rate. So the terms are read first, compared, and:
 * - a dry run reports the differences (`terms` on the import), and writes nothing;
 * - a real run with differences needs the merchant's explicit choice (`terms` on the request):
 *   `source`: the program takes the source's terms (one set: campaigns that disagree cannot be
 *   applied to one program), `program`: the program keeps its own, knowingly; without a choice the
 *   import fails before writing anything, naming the differences. No difference: nothing to choose.
 * A source whose API documents no terms reports `read: false`, and no choice is asked for.
 */
const FIELDS = [
  'commission_type',
  'commission_value',
  'minimum_payout',
  'commission_window_months',
  'commission_max_conversions',
  'hold_days',
  'click_window_days',
] as const;
type Field = (typeof FIELDS)[number];

interface ProgramTerms extends Record<Field, string | number | null> {
  currency: string;
}

const same = (a: string | number | null, b: string | number | null) =>
  a === null || b === null
    ? a === b
    : typeof a === 'string' && !/^-?[\d.]+$/.test(a)
      ? a === b
      : Number(a) === Number(b);

/** What differs between each campaign and the program (a term the source leaves unsaid is not compared). */
export function differencesOf(program: ProgramTerms, campaigns: SourceTerms[]): ImportTerms['differences'] {
  const out: ImportTerms['differences'] = [];
  for (const campaign of campaigns)
    for (const field of FIELDS) {
      const value = campaign.terms[field];
      if (value === undefined) continue;
      const ours = program[field];
      if (!same(value, ours))
        out.push({
          campaign: campaign.name ?? campaign.source_id,
          field,
          source: value === null ? null : String(value),
          program: ours === null ? null : String(ours),
        });
    }
  for (const campaign of campaigns)
    if (campaign.currency && campaign.currency !== program.currency)
      out.push({
        campaign: campaign.name ?? campaign.source_id,
        field: 'currency',
        source: campaign.currency,
        program: program.currency,
      });
  return out;
}

async function programTerms(db: Db, organizationId: string, programId: string): Promise<ProgramTerms> {
  return (await db.one(sql<ProgramTerms>`select commission_type, commission_value::text, minimum_payout::text, commission_window_months,
       commission_max_conversions, hold_days, click_window_days, currency from programs where organization_id = ${organizationId} and id = ${programId}`))!;
}

/**
 * Reads and settles the terms at the start of an import (once: the result is kept on the import):
 * the report to keep, or an ImportSourceError when a real run must not go on.
 */
export async function settleTerms(
  db: Db,
  target: {
    organizationId: string;
    programId: string;
    source: string;
    dryRun: boolean;
    choice: ImportTermsChoice | null;
  },
  campaigns: SourceTerms[] | null,
): Promise<ImportTerms> {
  if (campaigns === null) return { read: false, campaigns: 0, differences: [], applied: null };
  const program = await programTerms(db, target.organizationId, target.programId);
  const differences = differencesOf(program, campaigns);
  const report: ImportTerms = { read: true, campaigns: campaigns.length, differences, applied: null };
  if (target.dryRun || differences.length === 0) return report;
  const listed = differences
    .map((d) => `${d.field} ${d.source ?? 'none'} at ${target.source} (${d.campaign}), ${d.program ?? 'none'} here`)
    .join('; ');
  if (!target.choice)
    throw new ImportSourceError(
      `The campaign terms at ${target.source} differ from the program's: ${listed}. Nothing was imported. Start the import again with terms "source" (the program takes ${target.source}'s terms) or "program" (keep the program's: renewals of imported customers earn them).`,
    );
  if (target.choice === 'program') return { ...report, applied: 'program' };
  const [first, ...others] = campaigns;
  if (others.some((c) => FIELDS.some((f) => !same(c.terms[f] ?? null, first.terms[f] ?? null))))
    throw new ImportSourceError(
      `${target.source} has ${campaigns.length} campaigns with different terms: one program cannot take them all. Nothing was imported. Start the import again with terms "program", or set the program's terms by hand.`,
    );
  if (first.currency && first.currency !== program.currency)
    throw new ImportSourceError(
      `${target.source}'s terms are in ${first.currency}, the program's currency is ${program.currency}: they cannot be taken as they are. Nothing was imported. Start the import again with terms "program".`,
    );
  const fields = FIELDS.filter((f) => first.terms[f] !== undefined);
  // As the programs' own update does (programs.repository.ts updateOwned): a cap by count set now
  // counts what its customers were paid already, and every instance drops its cached rule on commit.
  if (first.terms.commission_max_conversions != null && program.commission_max_conversions == null)
    await db.rows(sql`update customers c set paid_conversions = (select count(*) from conversions v
         where v.organization_id = c.organization_id and v.customer_id = c.customer_id and v.amount > 0)
       where c.organization_id = ${target.organizationId} and c.program_id = ${target.programId}`);
  await notifyChange(db, { kind: 'program', id: target.programId });
  await db.rows(
    sql`update programs set ${sql.join(fields.map((f) => sql`${sql.ref(f)} = ${first.terms[f]}`))}, updated_at = now() where organization_id = ${target.organizationId} and id = ${target.programId}`,
  );
  return { ...report, applied: 'source' };
}
