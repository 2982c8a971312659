import { Migration } from '@mikro-orm/migrations';

/**
 * The merchant's branding (issue 47, item 10), on the organization: the partner portal and every
 * e-mail to partners are the organization's (one portal per organization, one sender), so its
 * logo, accent colour and sender name are too. A test organization shows its live twin's.
 * The checks state the rules the API validates (modules/branding): an https logo, a #rrggbb colour,
 * a sender name that cannot inject a mail header (no line break, no angle bracket).
 */
export class Migration20270126000000_branding extends Migration {
  override async up(): Promise<void> {
    this.addSql(`alter table organizations
  add column brand_logo_url text,
  add column brand_color text,
  add column mail_sender_name text,
  add constraint organizations_brand_logo_url_check check (brand_logo_url ~ '^https://' and length(brand_logo_url) <= 2048),
  add constraint organizations_brand_color_check check (brand_color ~ '^#[0-9a-f]{6}$'),
  add constraint organizations_mail_sender_name_check check (length(mail_sender_name) between 1 and 100 and mail_sender_name !~ '[<>\\r\\n]');`);
  }

  override async down(): Promise<void> {
    this.addSql(
      `alter table organizations drop column brand_logo_url, drop column brand_color, drop column mail_sender_name;`,
    );
  }
}
