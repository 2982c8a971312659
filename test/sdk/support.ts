import { Client, type ClientOptions } from '../../client-sdk/src/index.js';
import { createMerchant, createOrganization } from '../support/api.js';
import { testServer } from '../support/server.js';

/** An SDK client on the worker's live server; retries off so that a failure shows at once. */
export async function sdkClient(apiKey: string, options: Partial<ClientOptions> = {}): Promise<Client> {
  const { baseUrl } = await testServer();
  return new Client({ apiKey, baseUrl, maxRetries: 0, ...options });
}

/** An organization of its own with an SDK client for its key. */
export async function sdkOrganization() {
  const org = await createOrganization();
  return { ...org, client: await sdkClient(org.key) };
}

/** An organization with a program and an affiliate (`slug`), and an SDK client for its key. */
export async function sdkMerchant(program: Record<string, unknown> = {}) {
  const merchant = await createMerchant(program);
  return { ...merchant, client: await sdkClient(merchant.key) };
}

export function uniqueId(prefix: string): string {
  return `${prefix}_${Date.now().toString(36)}${Math.random().toString(36).slice(2, 8)}`;
}
