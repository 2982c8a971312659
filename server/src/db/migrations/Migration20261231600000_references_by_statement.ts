import { Migration } from '@mikro-orm/migrations';

/** The rows conversions and entries refer to, and the columns that make up their references. */
const KEPT_TABLES: [string, string[]][] = [
  ['conversions', ['id', 'organization_id', 'affiliate_id', 'program_id']],
  ['affiliates', ['id', 'organization_id', 'program_id']],
  ['clicks', ['id', 'organization_id']],
];

/** A trigger that refuses an UPDATE changing any of `columns` of a row of `table`. */
function keysFixed(table: string, columns: string[]): string {
  return `create trigger ${table}_keys_fixed before update of ${columns.join(', ')} on ${table}
  for each row when (${columns.map((c) => `old.${c} is distinct from new.${c}`).join(' or ')})
  execute function ledger_rows_are_kept();`;
}

/** What a statement check looks for (referenceCheckFunction). */
export interface ReferenceCheck {
  join?: string;
  missing: string;
  text: string;
}

/**
 * The function of a statement trigger on INSERT into `table` that fails the statement (SQLSTATE
 * 23503, the foreign-key violation's) with the first new row that refers to nothing: `check.missing`
 * says of a row (`n`, from the statement's new rows, named `rows`, with `check.join` beside it)
 * whether it lacks something, `check.text` which row and what it lacks. Run with sequential scans,
 * hash and merge joins (and JIT, which those costs would trigger) off. Those settings alone do not
 * keep the lookups on the primary keys: see Migration20261231700000_reference_lookups_by_id.
 */
export function referenceCheckFunction(table: string, rows: string, check: ReferenceCheck, orReplace = false): string {
  return `
create ${orReplace ? 'or replace ' : ''}function ${table}_references_exist() returns trigger language plpgsql
set enable_seqscan = off set enable_hashjoin = off set enable_mergejoin = off set jit = off as $$
declare
  missing text;
begin
  select ${check.text} into missing from ${rows} n ${check.join ?? ''} where ${check.missing} limit 1;
  if found then
    raise exception '%', missing using errcode = '23503', table = '${table}';
  end if;
  return null;
end $$;`;
}

/** referenceCheckFunction and its trigger, after each INSERT statement on `table`. */
function referencesExist(table: string, rows: string, check: ReferenceCheck): string[] {
  return [
    referenceCheckFunction(table, rows, check),
    `create trigger ${table}_references_exist after insert on ${table}
  referencing new table as ${rows} for each statement execute function ${table}_references_exist();`,
  ];
}

/** How a lookup matches the new row's organization (`alias`: the looked-up table's). */
export type OrganizationMatch = (alias: string) => string;

/** As first written: plain equality. */
const sameOrganization: OrganizationMatch = (alias) => `${alias}.organization_id = n.organization_id`;

/**
 * An entry with a conversion matches it (same organization, affiliate and program); one without
 * (an adjustment) matches a membership.
 */
export function entryReferences(organization: OrganizationMatch): ReferenceCheck {
  return {
    missing: `case when n.conversion_id is not null
    then (select true from conversions c where c.id = n.conversion_id and ${organization('c')}
          and c.affiliate_id = n.affiliate_id and c.program_id = n.program_id) is null
    else (select true from affiliates a where a.id = n.affiliate_id and ${organization('a')}
          and a.program_id = n.program_id) is null
  end`,
    text: `'commission entry ' || n.id || ' refers to no ' ||
    case when n.conversion_id is not null then 'conversion ' || n.conversion_id || ' of its affiliate' else 'affiliate ' || n.affiliate_id || ' in its program' end`,
  };
}

/** A conversion's membership exists, and its click when it has one. */
export function conversionReferences(organization: OrganizationMatch): ReferenceCheck {
  return {
    join: `cross join lateral (select (select true from affiliates a where a.id = n.affiliate_id and ${organization('a')}
                              and a.program_id = n.program_id) as found) m`,
    missing: `m.found is null
     or (n.click_id is not null and (select true from clicks k where k.id = n.click_id and ${organization('k')}) is null)`,
    text: `'conversion ' || n.id || ' refers to no ' ||
    case when m.found is null then 'affiliate ' || n.affiliate_id || ' in its program' else 'click ' || n.click_id end`,
  };
}

/**
 * A conversion's and a commission entry's references checked once per statement instead of once
 * per row.
 *
 * A conversion refers to its membership (affiliate, program, organization) and to its click; an
 * entry to its conversion (sale and clawback entries) and to its membership. They were four
 * foreign keys per conversion with its sale entry, each checked by PostgreSQL per row inserted: a
 * trigger call, a lookup and a KEY SHARE lock of the referenced row (a heap write and a WAL record
 * each), about half of what a sale entry cost the hot conversion statement (README, Performance).
 * A foreign key checks two things: that the referenced row exists when the entry is written, and
 * that it is not deleted or re-keyed afterwards. Here:
 *
 * - **On insert**, `commissions_references_exist`, a statement trigger, looks the statement's new
 *   entries up in one query: an entry with a conversion must match it (the conversion, in this
 *   organization, of this same affiliate and program: stronger than the two keys were, and the
 *   conversion's own membership key says the affiliate exists); an entry without one (an
 *   adjustment) must match its affiliate's (id, program_id, organization_id).
 *   `conversions_references_exist` does the same for new conversions: the membership (the
 *   affiliate, in this organization and program) and the click, when there is one. A miss fails
 *   the statement with SQLSTATE 23503, the foreign-key violation's (`referencesExist`). Each row's
 *   references are scalar subqueries on unique keys (never turned into a hash of a whole table).
 *   (Not enough to keep a plan cached while a table was small from scanning it whole later:
 *   Migration20261231700000_reference_lookups_by_id.) The entries' own references never change
 *   after (`commissions_keys_fixed`).
 * - **Afterwards**, `ledger_rows_are_kept`: conversions, affiliates and clicks are never deleted or
 *   truncated, and their keys never change (the service does neither: a merchant disables an
 *   affiliate and refunds a conversion). Refusing both outright, rather than when an entry refers
 *   to the row, leaves no race for a lock to close: nothing can take a row from under an entry.
 */
export class Migration20261231600000_references_by_statement extends Migration {
  override async up(): Promise<void> {
    for (const sql of referencesExist('commissions', 'new_entries', entryReferences(sameOrganization))) this.addSql(sql);

    this.addSql(`
create function ledger_rows_are_kept() returns trigger language plpgsql as $$
begin
  raise exception '% rows are kept for the ledger: never deleted, their keys never changed', tg_table_name
    using errcode = '23503', table = tg_table_name;
end $$;`);
    this.addSql(keysFixed('commissions', ['id', 'organization_id', 'conversion_id', 'affiliate_id', 'program_id']));
    for (const [table, keys] of KEPT_TABLES) {
      this.addSql(`create trigger ${table}_kept before delete on ${table} for each row execute function ledger_rows_are_kept();`);
      this.addSql(`create trigger ${table}_kept_whole before truncate on ${table} for each statement execute function ledger_rows_are_kept();`);
      this.addSql(keysFixed(table, keys));
    }

    for (const sql of referencesExist('conversions', 'new_conversions', conversionReferences(sameOrganization))) this.addSql(sql);
    this.addSql('alter table conversions drop constraint conversions_click_id_fkey, drop constraint conversions_membership_fkey;');
    this.addSql('alter table commissions drop constraint commissions_conversion_id_fkey, drop constraint commissions_membership_fkey;');
  }
}
