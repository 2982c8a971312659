import { Migration } from '@mikro-orm/migrations';

/**
 * Password-reset tokens are stored hashed from this release on (modules/people/auth.ts,
 * better-auth's `verification.storeIdentifier: 'hashed'`): the identifier `reset-password:<token>`
 * becomes base64url(SHA-256(identifier)), unpadded, as better-auth computes it. The rows a previous
 * release wrote in clear (links at most an hour old) are hashed here the same way, so an e-mailed
 * link still works and the table holds no usable token. Magic-link rows are hashed already and do
 * not start with `reset-password:`.
 */
export const HASH_CLEAR_RESET_TOKENS = `update verifications
   set identifier = rtrim(translate(encode(sha256(convert_to(identifier, 'UTF8')), 'base64'), '+/', '-_'), '=')
 where identifier like 'reset-password:%'`;

export class Migration20270115000000_hashed_verifications extends Migration {
  override async up(): Promise<void> {
    this.addSql(HASH_CLEAR_RESET_TOKENS);
  }
}
