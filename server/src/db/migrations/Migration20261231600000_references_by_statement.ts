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
 *   the statement with SQLSTATE 23503, the foreign-key violation's. Each row's references are
 *   scalar subqueries on unique keys (never turned into a hash of a whole table), and the functions
 *   run with sequential scans, hash and merge joins (and JIT, which those costs would trigger) off,
 *   so a plan cached while a table was small cannot turn into a scan of a large one. The entries'
 *   own references never change after (`commissions_keys_fixed`).
 * - **Afterwards**, `ledger_rows_are_kept`: conversions, affiliates and clicks are never deleted or
 *   truncated, and their keys never change (the service does neither: a merchant disables an
 *   affiliate and refunds a conversion). Refusing both outright, rather than when an entry refers
 *   to the row, leaves no race for a lock to close: nothing can take a row from under an entry.
 */
export class Migration20261231600000_references_by_statement extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
create function commissions_references_exist() returns trigger language plpgsql
set enable_seqscan = off set enable_hashjoin = off set enable_mergejoin = off set jit = off as $$
declare
  missing record;
begin
  select n.id, n.conversion_id, n.affiliate_id into missing from new_entries n
  where case when n.conversion_id is not null
    then (select true from conversions c where c.id = n.conversion_id and c.organization_id = n.organization_id
          and c.affiliate_id = n.affiliate_id and c.program_id = n.program_id) is null
    else (select true from affiliates a where a.id = n.affiliate_id and a.organization_id = n.organization_id
          and a.program_id = n.program_id) is null
  end
  limit 1;
  if found then
    raise exception 'commission entry % refers to no %', missing.id,
      case when missing.conversion_id is not null then 'conversion ' || missing.conversion_id || ' of its affiliate' else 'affiliate ' || missing.affiliate_id || ' in its program' end
      using errcode = '23503', table = 'commissions';
  end if;
  return null;
end $$;`);
    this.addSql(`create trigger commissions_references_exist after insert on commissions
  referencing new table as new_entries for each statement execute function commissions_references_exist();`);

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

    this.addSql(`
create function conversions_references_exist() returns trigger language plpgsql
set enable_seqscan = off set enable_hashjoin = off set enable_mergejoin = off set jit = off as $$
declare
  missing record;
begin
  select n.id, n.click_id, n.affiliate_id, m.found is null as no_affiliate
  into missing from new_conversions n
  cross join lateral (select (select true from affiliates a where a.id = n.affiliate_id and a.organization_id = n.organization_id
                              and a.program_id = n.program_id) as found) m
  where m.found is null
     or (n.click_id is not null and (select true from clicks k where k.id = n.click_id and k.organization_id = n.organization_id) is null)
  limit 1;
  if found then
    raise exception 'conversion % refers to no %', missing.id,
      case when missing.no_affiliate then 'affiliate ' || missing.affiliate_id || ' in its program' else 'click ' || missing.click_id end
      using errcode = '23503', table = 'conversions';
  end if;
  return null;
end $$;`);
    this.addSql(`create trigger conversions_references_exist after insert on conversions
  referencing new table as new_conversions for each statement execute function conversions_references_exist();`);
    this.addSql('alter table conversions drop constraint conversions_click_id_fkey;');
    this.addSql('alter table conversions drop constraint conversions_membership_fkey;');
    this.addSql('alter table commissions drop constraint commissions_conversion_id_fkey;');
    this.addSql('alter table commissions drop constraint commissions_membership_fkey;');
  }
}
