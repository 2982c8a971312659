import { Migration } from '@mikro-orm/migrations';

/**
 * Deleting an organization, or a test organization's data, as a job in bounded batches
 * (modules/organizations/data-deletion.ts) instead of one transaction that held the report fold's
 * lock, which every organization's commission and conversion updates share, for minutes.
 *
 * - `organizations.deletion_requested_at`: set, in one short transaction, when the operator asks
 *   for the organization's deletion (on it and its test twin). From then on its API keys are
 *   revoked and the organization is refused wherever a request names it (authentication, dashboard
 *   sessions, the operator's routes), while the job deletes its rows.
 * - `data_deletions`: one row per deletion, its receipt and progress: what is deleted (`kind`:
 *   an organization with its twin, or a test organization's data), its status, the table being
 *   deleted from, and the rows deleted so far per table, written in the same transaction as each
 *   batch (exact after a crash: a batch and its count commit together). It refers to no
 *   organization on purpose: it outlives the organization it records (the operator polls it until
 *   it says `completed`), so it is the one table with an `organization_id` that the deletion itself
 *   never deletes (organization-data.ts, DELETION_RECEIPTS). Its key starts with organization_id
 *   (Citus distributes it with the others); at most one deletion of an organization is unfinished.
 */
export class Migration20270112000000_data_deletions extends Migration {
  override async up(): Promise<void> {
    this.addSql(`alter table organizations add column deletion_requested_at timestamptz`);
    this.addSql(`create table data_deletions (
  organization_id uuid not null,
  id uuid not null,
  kind text not null check (kind in ('organization', 'test_data')),
  status text not null default 'queued' check (status in ('queued', 'running', 'completed', 'failed')),
  phase text,
  deleted jsonb not null default '{}'::jsonb,
  error text,
  requested_at timestamptz not null default now(),
  started_at timestamptz,
  finished_at timestamptz,
  primary key (organization_id, id),
  check ((status in ('completed', 'failed')) = (finished_at is not null))
)`);
    this.addSql(
      `create unique index data_deletions_one_unfinished on data_deletions (organization_id) where finished_at is null`,
    );
  }

  override async down(): Promise<void> {
    this.addSql(`drop table data_deletions`);
    this.addSql(`alter table organizations drop column deletion_requested_at`);
  }
}
