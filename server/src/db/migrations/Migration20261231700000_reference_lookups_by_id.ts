import { Migration } from '@mikro-orm/migrations';
import {
  conversionReferences,
  entryReferences,
  referenceCheckFunction,
  type OrganizationMatch,
} from './Migration20261231600000_references_by_statement.js';

/**
 * `is not distinct from`: the same match as `=` for these non-null keys, but no index can serve
 * it, so the organization cannot lead the lookup into an index by organization.
 */
const organizationNotIndexed: OrganizationMatch = (alias) => `${alias}.organization_id is not distinct from n.organization_id`;

/**
 * The statement checks of conversions and commission entries (Migration20261231600000) look their
 * references up by id, always through the primary key.
 *
 * Each looked up `id = … and organization_id = …`. Every table involved also has indexes that
 * start with `organization_id` (the lists', `clicks_cookie_unique`, `affiliates_slug_unique`…),
 * and while a table holds a few hundred rows at most, all its indexes are one page: PostgreSQL
 * costs them alike and may pick one led by the organization, matching `id` inside it. PL/pgSQL
 * keeps a trigger's plan for the life of the connection, so a connection whose first conversion
 * came while the tables were small went on scanning every conversion (or click, or affiliate) of
 * the organization for each reference it checked: with no new statistics to replace the plan
 * (autovacuum off, the embedded database), each conversion cost more than the one before.
 * `npm run bench` caught it as a run now and then at a tenth of the usual rate, one backend busy
 * scanning (README, Performance, 2026-11-27). Matching the organization with `is not distinct
 * from` leaves `id` as the only indexed condition, and only the primary keys (and
 * `affiliates_membership_key`) start with `id`: the plan probes them whatever the tables' size
 * when it was made (`test/reliability/reference-lookups.test.ts`).
 */
export class Migration20261231700000_reference_lookups_by_id extends Migration {
  override async up(): Promise<void> {
    this.addSql(referenceCheckFunction('commissions', 'new_entries', entryReferences(organizationNotIndexed), true));
    this.addSql(referenceCheckFunction('conversions', 'new_conversions', conversionReferences(organizationNotIndexed), true));
  }
}
