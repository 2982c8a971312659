import { Migration } from '@mikro-orm/migrations';

/**
 * One foreign key per row for "whose membership is this" instead of three. Every row written on
 * the hot paths (clicks, customers, conversions, their sale entries) carried three foreign keys
 * for it: to the affiliate, to the program and to the organization, each checked by PostgreSQL
 * per row inserted (a lookup and a KEY SHARE lock of the referenced row: an affiliate, a program
 * and an organization every request of a program shares). A row's program is always its
 * affiliate's (an affiliate is a membership of one program, which never changes; every writer takes
 * program_id from the affiliate), so one composite key, (affiliate_id, program_id,
 * organization_id) -> affiliates (id, program_id, organization_id), says all three and more: the
 * affiliate exists, in this organization, and this is its program (the affiliate's own keys say
 * the program and the organization exist). Measured by `npm run bench` (README, Performance).
 *
 * The new keys are added NOT VALID, then validated (a scan of each table), so that an existing row
 * that breaks the stronger rule fails this migration by name. Migrations run in one transaction,
 * so writes to these tables wait until it commits: about 1.5 s per million rows on the 2-core
 * machine of the README's figures (its upgrade note says so).
 */
const MEMBERSHIP_TABLES = ['clicks', 'suppressed_clicks', 'customers', 'conversions', 'commissions', 'payouts', 'coupons'];

export class Migration20261231400000_membership_foreign_keys extends Migration {
  override async up(): Promise<void> {
    this.addSql('alter table affiliates add constraint affiliates_membership_key unique (id, program_id, organization_id);');
    for (const table of MEMBERSHIP_TABLES) {
      this.addSql(
        `alter table ${table}
          drop constraint if exists ${table}_affiliate_id_fkey,
          drop constraint if exists ${table}_program_id_fkey,
          drop constraint if exists ${table}_organization_id_fkey,
          add constraint ${table}_membership_fkey foreign key (affiliate_id, program_id, organization_id) references affiliates (id, program_id, organization_id) not valid;`,
      );
      this.addSql(`alter table ${table} validate constraint ${table}_membership_fkey;`);
    }
  }
}
