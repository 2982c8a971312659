import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';

/** Stored form of an encrypted secret: `enc:v1:` + base64url(iv ‖ tag ‖ ciphertext). */
const PREFIX = 'enc:v1:';
const IV_BYTES = 12;
const TAG_BYTES = 16;

/** ENCRYPTION_KEY as config.ts accepts it: 32 bytes, as 64 hex characters or base64 (44 characters). */
export function parseEncryptionKey(value: string): Buffer | undefined {
  if (/^[0-9a-fA-F]{64}$/.test(value)) return Buffer.from(value, 'hex');
  if (/^[A-Za-z0-9+/_-]{43}=?$/.test(value)) {
    const key = Buffer.from(value.replace(/-/g, '+').replace(/_/g, '/'), 'base64');
    if (key.length === 32) return key;
  }
  return undefined;
}

export const isEncrypted = (stored: string): boolean => stored.startsWith(PREFIX);

/**
 * Secrets the service must be able to use again (webhook endpoints' signing secrets, payment
 * providers' signing secrets), so hashing is not an option: they are encrypted at rest with
 * AES-256-GCM under ENCRYPTION_KEY, each with a fresh 96-bit IV, and authenticated with a purpose
 * label (a ciphertext copied from one column into another does not decrypt there).
 *
 * Without a key, secrets are stored as given (the service logs a warning at start). Reading
 * accepts both forms, so a key can be set on a running deployment: values written from then on are
 * encrypted, and the migration that encrypts existing ones runs when the key is present.
 */
export class SecretBox {
  private readonly key: Buffer | undefined;

  constructor(encryptionKey: string | undefined) {
    if (encryptionKey === undefined) {
      this.key = undefined;
      return;
    }
    const key = parseEncryptionKey(encryptionKey);
    if (!key) throw new Error('ENCRYPTION_KEY must be 32 bytes: 64 hex characters or 44 base64 characters');
    this.key = key;
  }

  get encrypts(): boolean {
    return this.key !== undefined;
  }

  seal(plain: string, purpose: string): string {
    if (!this.key) return plain;
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', this.key, iv);
    cipher.setAAD(Buffer.from(purpose));
    const ciphertext = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
    return PREFIX + Buffer.concat([iv, cipher.getAuthTag(), ciphertext]).toString('base64url');
  }

  open(stored: string, purpose: string): string {
    if (!isEncrypted(stored)) return stored;
    if (!this.key) throw new Error('a secret is stored encrypted but ENCRYPTION_KEY is not set');
    const raw = Buffer.from(stored.slice(PREFIX.length), 'base64url');
    const decipher = createDecipheriv('aes-256-gcm', this.key, raw.subarray(0, IV_BYTES));
    decipher.setAAD(Buffer.from(purpose));
    decipher.setAuthTag(raw.subarray(IV_BYTES, IV_BYTES + TAG_BYTES));
    return Buffer.concat([decipher.update(raw.subarray(IV_BYTES + TAG_BYTES)), decipher.final()]).toString('utf8');
  }

  /**
   * Documents (a partner's tax form): AES-256-GCM under the same key, as bytes (BYTES_VERSION ‖ iv ‖
   * tag ‖ ciphertext), authenticated with `purpose`. Unlike seal, never stored as given: without a
   * key this throws, and the caller refuses the document (personal data is not kept in clear).
   */
  sealBytes(plain: Buffer, purpose: string): Buffer {
    if (!this.key) throw new Error('ENCRYPTION_KEY is not set');
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', this.key, iv);
    cipher.setAAD(Buffer.from(purpose));
    const ciphertext = Buffer.concat([cipher.update(plain), cipher.final()]);
    return Buffer.concat([BYTES_VERSION, iv, cipher.getAuthTag(), ciphertext]);
  }

  openBytes(stored: Buffer, purpose: string): Buffer {
    if (!this.key) throw new Error('a document is stored encrypted but ENCRYPTION_KEY is not set');
    if (stored[0] !== BYTES_VERSION[0]) throw new Error('not a sealed document');
    const iv = stored.subarray(1, 1 + IV_BYTES);
    const decipher = createDecipheriv('aes-256-gcm', this.key, iv);
    decipher.setAAD(Buffer.from(purpose));
    decipher.setAuthTag(stored.subarray(1 + IV_BYTES, 1 + IV_BYTES + TAG_BYTES));
    return Buffer.concat([decipher.update(stored.subarray(1 + IV_BYTES + TAG_BYTES)), decipher.final()]);
  }
}

/** The first byte of a sealed document: its format, so that a later one can be told apart. */
const BYTES_VERSION = Buffer.from([1]);

/** The purposes (authenticated labels) of the secrets the service keeps. */
export const SECRET_PURPOSE = {
  webhookEndpoint: 'webhook_endpoints.secret',
  integration: 'integrations.signing_secret',
  payoutRail: 'integrations.credentials',
} as const;

/** A tax form's document is bound to its row: a ciphertext copied to another membership does not open there. */
export const taxFormPurpose = (organizationId: string, affiliateId: string): string =>
  `tax_forms.document:${organizationId}:${affiliateId}`;
