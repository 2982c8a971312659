import type { ImportSource } from '@affiliate-attribution/contract';
import { ImportSourceError, type SourceReader } from '../import-model.js';
import { CsvReader } from './csv.js';
import { FirstPromoterReader } from './firstpromoter.js';
import { PartnerStackReader } from './partnerstack.js';
import { RewardfulReader } from './rewardful.js';
import { TapfiliateReader } from './tapfiliate.js';
import type { SourceHttpOptions } from './source-http.js';
import { ToltReader } from './tolt.js';

/** Where each source's API is reached (config.ts IMPORT_<SOURCE>_API_BASE_URL). */
export type SourceBaseUrls = Record<Exclude<ImportSource, 'csv'>, string>;

/** The sources whose importers exist (every source the contract names). */
export const IMPLEMENTED_SOURCES: readonly ImportSource[] = [
  'rewardful',
  'tolt',
  'firstpromoter',
  'partnerstack',
  'tapfiliate',
  'csv',
];

/** `http`: what the runner sets on every request (its pauses in tests, the cancel signal). */
export function readerFor(
  source: ImportSource,
  credentials: Record<string, string>,
  baseUrls: SourceBaseUrls,
  http: Pick<SourceHttpOptions, 'sleep' | 'signal'> = {},
): SourceReader {
  switch (source) {
    case 'rewardful':
      return new RewardfulReader(credentials, baseUrls.rewardful, http);
    case 'tolt':
      return new ToltReader(credentials, baseUrls.tolt, http);
    case 'firstpromoter':
      return new FirstPromoterReader(credentials, baseUrls.firstpromoter, http);
    case 'csv':
      return new CsvReader(credentials);
    case 'partnerstack':
      return new PartnerStackReader(credentials, baseUrls.partnerstack, http);
    case 'tapfiliate':
      return new TapfiliateReader(credentials, baseUrls.tapfiliate, http);
    default:
      throw new ImportSourceError(`source "${String(source)}" is not implemented yet`);
  }
}
