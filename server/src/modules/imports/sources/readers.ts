import type { ImportSource } from '@affiliate-attribution/contract';
import { ImportSourceError, type SourceReader } from '../import-model.js';
import { CsvReader } from './csv.js';
import { FirstPromoterReader } from './firstpromoter.js';
import { PartnerStackReader } from './partnerstack.js';
import { RewardfulReader } from './rewardful.js';
import { TapfiliateReader } from './tapfiliate.js';
import { ToltReader } from './tolt.js';

/** Where each source's API is reached (config.ts IMPORT_<SOURCE>_API_BASE_URL). */
export type SourceBaseUrls = Record<Exclude<ImportSource, 'csv'>, string>;

/** The sources whose importers exist (every source the contract names). */
export const IMPLEMENTED_SOURCES: readonly ImportSource[] = ['rewardful', 'tolt', 'firstpromoter', 'partnerstack', 'tapfiliate', 'csv'];

export function readerFor(source: ImportSource, credentials: Record<string, string>, baseUrls: SourceBaseUrls, sleep?: (ms: number) => Promise<void>): SourceReader {
  switch (source) {
    case 'rewardful':
      return new RewardfulReader(credentials, baseUrls.rewardful, sleep ? { sleep } : {});
    case 'tolt':
      return new ToltReader(credentials, baseUrls.tolt, sleep ? { sleep } : {});
    case 'firstpromoter':
      return new FirstPromoterReader(credentials, baseUrls.firstpromoter, sleep ? { sleep } : {});
    case 'csv':
      return new CsvReader(credentials);
    case 'partnerstack':
      return new PartnerStackReader(credentials, baseUrls.partnerstack, sleep ? { sleep } : {});
    case 'tapfiliate':
      return new TapfiliateReader(credentials, baseUrls.tapfiliate, sleep ? { sleep } : {});
    default:
      throw new ImportSourceError(`source "${String(source)}" is not implemented yet`);
  }
}
