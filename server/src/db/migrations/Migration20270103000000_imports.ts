import { Migration } from '@mikro-orm/migrations';

/**
 * Imports from other affiliate platforms (modules/imports, shared/spec/imports.md).
 *
 * - `imports`: one row per import, its progress and counts. The source's credentials are kept
 *   sealed (security/secret-box.ts) only while the import runs, so that a restarted job can go on;
 *   they are erased when it ends.
 * - `import_rows`: which of our rows each source row became, keyed by the source's own id. Its
 *   primary key is what makes a rerun change nothing: a row is written in the same transaction as
 *   its key, and a key already there means "already present".
 * - `affiliate_link_aliases`: a partner's other link tokens (a Rewardful affiliate may have
 *   several links), still attributing to that partner; the slug lookup reads them after the slugs.
 * - `import_id` on the rows an import creates, with a composite foreign key (organization_id
 *   first), so undoing an import knows exactly its rows, and an import cannot be deleted while
 *   rows still name it.
 */
export class Migration20270103000000_imports extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create table imports (
  id uuid not null,
  organization_id uuid not null references organizations (id),
  program_id uuid not null,
  source text not null check (source in ('rewardful', 'tolt', 'firstpromoter', 'partnerstack', 'tapfiliate', 'csv')),
  dry_run boolean not null,
  status text not null check (status in ('running', 'succeeded', 'failed')),
  sealed_credentials text,
  progress jsonb not null default '{"phase": "queued", "pages": 0}',
  counts jsonb not null default '{}',
  skipped jsonb not null default '[]',
  error text,
  created_at timestamptz not null default now(),
  finished_at timestamptz,
  primary key (id, organization_id),
  foreign key (program_id, organization_id) references programs (id, organization_id)
)`);
    this.addSql(`create index imports_list_idx on imports (organization_id, created_at desc, id desc)`);
    this.addSql(`create table import_rows (
  organization_id uuid not null,
  program_id uuid not null,
  source text not null,
  kind text not null check (kind in ('affiliates', 'customers', 'conversions', 'commissions', 'payouts')),
  source_id text not null,
  row_id uuid not null,
  import_id uuid not null,
  primary key (organization_id, program_id, source, kind, source_id),
  foreign key (import_id, organization_id) references imports (id, organization_id)
)`);
    this.addSql(`create index import_rows_import_idx on import_rows (organization_id, import_id)`);
    this.addSql(`create table affiliate_link_aliases (
  organization_id uuid not null,
  token text not null,
  affiliate_id uuid not null,
  program_id uuid not null,
  import_id uuid,
  primary key (organization_id, token),
  foreign key (affiliate_id, program_id, organization_id) references affiliates (id, program_id, organization_id),
  foreign key (import_id, organization_id) references imports (id, organization_id)
)`);
    for (const table of ['affiliates', 'customers', 'conversions', 'commissions', 'payouts']) {
      // Nullable, no default: no table rewrite on the busy tables.
      this.addSql(`alter table ${table} add column import_id uuid`);
      this.addSql(
        `alter table ${table} add constraint ${table}_import_fkey foreign key (import_id, organization_id) references imports (id, organization_id)`,
      );
      this.addSql(
        `create index ${table}_import_idx on ${table} (organization_id, import_id) where import_id is not null`,
      );
    }
  }
}
