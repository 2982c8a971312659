import { Migration } from '@mikro-orm/migrations';

/**
 * Test mode (shared/spec/test-mode.md): test data lives in a twin organization. Every live
 * organization has one test organization, a row of `organizations` whose `live_organization_id`
 * names the live one. Every table is already scoped by `organization_id`, and every unique key
 * starts with it, so test and live data are kept apart, and a slug, `customer_id` or
 * `external_id` is unique within each mode, by the keys that exist, with no change to any query.
 *
 * - `livemode` is derived, never written: true exactly when the row has no live organization.
 * - A twin has no twin of its own: `live_organization_id` may only name a live organization. That
 *   is a plain foreign key onto the unique pair (id, livemode), from (live_organization_id,
 *   live_organization_livemode), the latter generated as `true` wherever live_organization_id is
 *   set (and null otherwise, so a live row's key is not checked: MATCH SIMPLE).
 * - At most one twin per live organization: `live_organization_id` is unique. That each live
 *   organization has one is the code's part: OrganizationsService.create inserts both in one
 *   transaction, and this migration gives every existing organization its twin.
 * - API keys need no mode of their own: a key's organization says it (the twin's keys are test keys).
 */
export class Migration20270105000000_test_mode extends Migration {
  override async up(): Promise<void> {
    this.addSql(`alter table organizations
  add column live_organization_id uuid,
  add column livemode boolean not null generated always as (live_organization_id is null) stored,
  add column live_organization_livemode boolean generated always as (case when live_organization_id is not null then true end) stored`);
    this.addSql(`alter table organizations
  add constraint organizations_id_livemode_unique unique (id, livemode),
  add constraint organizations_live_organization_unique unique (live_organization_id),
  add constraint organizations_not_own_twin check (live_organization_id <> id),
  add constraint organizations_live_organization_fkey foreign key (live_organization_id, live_organization_livemode) references organizations (id, livemode)`);
    this.addSql(`insert into organizations (id, name, created_at, click_retention_days, live_organization_id)
  select gen_random_uuid(), name, created_at, click_retention_days, id from organizations where live_organization_id is null`);
  }
}
