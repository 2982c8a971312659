import { Migration } from '@mikro-orm/migrations';
import { loadConfig } from '../../config.js';
import { SECRET_PURPOSE, SecretBox, isEncrypted } from '../../security/secret-box.js';

/**
 * Payment providers' signing secrets were stored as given. With ENCRYPTION_KEY set, the ones
 * stored in plain text are encrypted now (security/secret-box.ts); without it nothing changes, and
 * the service reads both forms, so setting the key later only encrypts what is written from then
 * on (store a secret again with PUT /api/integrations/{provider} to encrypt it).
 */
export class Migration20261229000100_encrypt_integration_secrets extends Migration {
  override async up(): Promise<void> {
    await encryptIntegrationSecrets(new SecretBox(loadConfig().ENCRYPTION_KEY), (query, params) => this.execute(query, params));
  }
}

/** Encrypts the providers' signing secrets stored in plain text; nothing without a key. Answers how many. */
export async function encryptIntegrationSecrets(box: SecretBox, execute: (query: string, params?: unknown[]) => Promise<unknown[]>): Promise<number> {
  if (!box.encrypts) return 0;
  const rows = (await execute('select id, signing_secret from integrations')) as { id: string; signing_secret: string }[];
  let encrypted = 0;
  for (const row of rows) {
    if (isEncrypted(row.signing_secret)) continue;
    await execute('update integrations set signing_secret = ? where id = ?', [box.seal(row.signing_secret, SECRET_PURPOSE.integration), row.id]);
    encrypted++;
  }
  return encrypted;
}
