import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe } from 'vitest';

/**
 * The providers' own published example events (their SDKs' test fixtures and documentation
 * samples) live beside the project, in ../shared/fixtures/providers/ from the repository root.
 * Their README binds us: read them in place, never copy them (or parts of them) into the project.
 * Tests change, in code, only the few fields a walk needs (ids that tie a renewal to its customer,
 * amounts of a refund, the referral), each change commented with the file it applies to.
 */
export const PUBLISHED_DIR = fileURLToPath(new URL('../../../../shared/fixtures/providers/', import.meta.url));

/**
 * Where the folder is missing (a laptop with the project alone) these suites skip themselves;
 * never under CI, where the folder is always present: there a missing folder fails the run
 * (reading a file throws) instead of passing silently.
 */
export const describePublished = existsSync(PUBLISHED_DIR) || process.env.CI ? describe : describe.skip;

type Provider = 'stripe' | 'paddle' | 'lemonsqueezy' | 'polar' | 'chargebee';

/** A fresh parse of a published file on every call: a test's changes never leak into another's. */
export function published<T = any>(provider: Provider, file: string): T {
  return JSON.parse(readFileSync(join(PUBLISHED_DIR, provider, file), 'utf8')) as T;
}
