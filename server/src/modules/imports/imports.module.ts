import type { MikroORM } from '@mikro-orm/postgresql';
import type { Logger } from 'pino';
import type { CacheChange } from '../../db/change-notifications.js';
import { importBaseUrls } from '../../config.js';
import { SecretBox } from '../../security/secret-box.js';
import { ImportRunner, type ImportRunnerOptions } from './import-runner.js';
import { ImportsRepository } from './imports.repository.js';
import { ImportsService } from './imports.service.js';
import type { SourceBaseUrls } from './sources/readers.js';

export interface ImportsSettings {
  encryptionKey?: string;
  /** Where each source is reached; default: config.ts's IMPORT_<SOURCE>_API_BASE_URL, read when an import starts. */
  baseUrls?: Partial<SourceBaseUrls>;
  sleep?: (ms: number) => Promise<void>;
  /** The runner's retries and concurrency (import-runner.ts; tests shorten the waits). */
  runner?: Pick<ImportRunnerOptions, 'concurrency' | 'maxAttempts' | 'retryDelayMs'>;
  /** This instance's caches (services.ts caches.changed): an undo tells them what it deleted. */
  onChange?: (change: CacheChange) => void;
}

/** The imports module: its service for the routes, its runner for main.ts (start at boot, stop at shutdown). */
export function createImports(
  orm: MikroORM,
  logger: Logger,
  settings: ImportsSettings = {},
): { service: ImportsService; runner: ImportRunner } {
  const secrets = new SecretBox(settings.encryptionKey);
  const repository = new ImportsRepository(orm);
  const runner = new ImportRunner(orm, repository, secrets, logger, {
    baseUrls: () => ({ ...importBaseUrls(), ...settings.baseUrls }),
    sleep: settings.sleep,
    onChange: settings.onChange,
    ...settings.runner,
  });
  return { service: new ImportsService(repository, runner, secrets, settings.onChange), runner };
}
