import { Migration } from '@mikro-orm/migrations';

/**
 * The partner notices' round (modules/partners/partner-notices.ts) looks every few seconds, on
 * every instance, for commissions of the last 72 hours no partner was told of yet: a range on
 * `commissions.created_at` across organizations. Without an index that is a scan of every
 * commission ever made. Commissions are written in time order (an import's back-dated pages
 * aside), which is what a BRIN index serves: a few pages of summaries, next to nothing to maintain
 * on the insert path (a btree would add a tree insert to every sale). `autosummarize` summarizes a
 * range once it fills; ranges not summarized yet are read, which are the recent ones asked for.
 */
export class Migration20270124000001_commissions_recent_brin extends Migration {
  override async up(): Promise<void> {
    this.addSql(
      `create index if not exists commissions_created_at_brin on commissions using brin (created_at) with (autosummarize = on);`,
    );
  }

  override async down(): Promise<void> {
    this.addSql(`drop index if exists commissions_created_at_brin;`);
  }
}
