import { Migration } from '@mikro-orm/migrations';

/**
 * One namespace of link tokens per organization (issue 47): a partner's slug and every alias
 * (affiliate_link_aliases: the links an import brought, a slug changed since) are tokens of
 * `affiliate_link_tokens`, whose primary key `(organization_id, token)` lets one affiliate hold a
 * token, so two concurrent requests cannot both take it (modules/affiliates/link-tokens.ts writes
 * it on every path that sets a slug or an alias). Test and live data are organizations of their
 * own (Migration20270105000000_test_mode), so each mode has its namespace, as slugs always had.
 *
 * An alias refers to its token (`affiliate_link_aliases_token_fkey`): an alias cannot exist
 * without holding its token. A slug is registered by the code that sets it (a key from
 * `affiliates` would make the two tables refer to each other, which the ordered deletion of an
 * organization's rows, organization-data.ts, cannot walk).
 *
 * Before this, a new partner could take a token another partner held as an alias; the slug lookup
 * then answered the slug's owner. The rows are carried over as that lookup answered: every slug,
 * then every alias no slug holds. An alias a slug holds never attributed to its partner once read
 * from the database, and is deleted.
 */
export class Migration20270121000000_link_tokens extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create table affiliate_link_tokens (
  organization_id uuid not null,
  token text not null,
  affiliate_id uuid not null,
  program_id uuid not null,
  constraint affiliate_link_tokens_pkey primary key (organization_id, token),
  constraint affiliate_link_tokens_owner_key unique (organization_id, token, affiliate_id),
  constraint affiliate_link_tokens_membership_fkey foreign key (affiliate_id, program_id, organization_id) references affiliates (id, program_id, organization_id)
)`);
    this.addSql(
      `create index affiliate_link_tokens_membership_idx on affiliate_link_tokens (organization_id, affiliate_id, program_id)`,
    );
    this.addSql(
      `insert into affiliate_link_tokens (organization_id, token, affiliate_id, program_id) select organization_id, slug, id, program_id from affiliates`,
    );
    this.addSql(
      `delete from affiliate_link_aliases l where exists (select 1 from affiliates a where a.organization_id = l.organization_id and a.slug = l.token)`,
    );
    this.addSql(
      `insert into affiliate_link_tokens (organization_id, token, affiliate_id, program_id) select organization_id, token, affiliate_id, program_id from affiliate_link_aliases`,
    );
    this.addSql(
      `alter table affiliate_link_aliases add constraint affiliate_link_aliases_token_fkey foreign key (organization_id, token, affiliate_id) references affiliate_link_tokens (organization_id, token, affiliate_id)`,
    );
    this.addSql(
      `create index affiliate_link_aliases_token_idx on affiliate_link_aliases (organization_id, token, affiliate_id)`,
    );
  }
}
