import { Migration } from '@mikro-orm/migrations';

/**
 * An import compares its source's campaign terms with the program's before it writes anything
 * (modules/imports/import-terms.ts): `terms_choice` is the merchant's choice sent with the request
 * (`source` or `program`, or null), `terms` what was compared and which terms the run went on with.
 */
export class Migration20270122000002_import_terms extends Migration {
  override async up(): Promise<void> {
    this.addSql(`alter table imports
  add column terms jsonb,
  add column terms_choice text check (terms_choice in ('source', 'program'))`);
  }
}
