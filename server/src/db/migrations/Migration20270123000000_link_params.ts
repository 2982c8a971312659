import { Migration } from '@mikro-orm/migrations';

/**
 * `organizations.link_params`: the query parameters whose value names a partner on the merchant's
 * pages (`?ref=ada`, Rewardful's `?via=ada`, ...). The snippet, the SDK's middleware and its
 * first-party proxy read them (modules/organizations/link-params.ts), so links a merchant's
 * partners published on another platform keep attributing after an import. One to ten names, each
 * a plain query-parameter name: the same rule the API applies, held by the database as well.
 * Kept on the live organization (the account); a test twin's column stays at its default, unread.
 */
export class Migration20270123000000_link_params extends Migration {
  override async up(): Promise<void> {
    this.addSql(`alter table organizations add column link_params text[] not null default '{ref}'
  constraint organizations_link_params_check check (
    cardinality(link_params) between 1 and 10
    and array_to_string(link_params, ',') ~ '^[a-z_][a-z0-9_-]{0,31}(,[a-z_][a-z0-9_-]{0,31})*$'
  );`);
  }

  override async down(): Promise<void> {
    this.addSql('alter table organizations drop column link_params;');
  }
}
