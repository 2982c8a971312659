import { Migration } from '@mikro-orm/migrations';

/**
 * E-mails of test data (spec/test-mode.md, "What test mode never does"): a message the service
 * would send to a partner or a customer of a test organization (the twin of a live one) is kept
 * here instead of being sent, whole (recipient, subject and text with its links), for the merchant
 * to read in the dashboard (GET /api/test-emails) and follow the flow it starts. Rows belong to the
 * twin; deleting test data deletes them.
 */
export class Migration20270106000000_test_emails extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create table test_emails (
  id uuid not null,
  organization_id uuid not null references organizations (id),
  recipient text not null,
  subject text not null,
  text text not null,
  created_at timestamptz not null default now(),
  primary key (id, organization_id)
)`);
    this.addSql(`create index test_emails_list_idx on test_emails (organization_id, created_at desc, id desc)`);
  }
}
