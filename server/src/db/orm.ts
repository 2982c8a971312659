import { MikroORM, type Options } from '@mikro-orm/postgresql';
import { Migrator } from '@mikro-orm/migrations';
import { ApiKeyEntity, OrganizationEntity } from '../modules/organizations/organization.entity.js';
import { ProgramEntity } from '../modules/programs/program.entity.js';
import { AffiliateEntity } from '../modules/affiliates/affiliate.entity.js';
import { ClickEntity } from '../modules/clicks/click.entity.js';
import { CustomerEntity } from '../modules/customers/customer.entity.js';
import { ConversionEntity } from '../modules/conversions/conversion.entity.js';
import { IntegrationEntity } from '../modules/integrations/integration.entity.js';
import { migrationsList } from './migrations/index.js';

export const entities = [
  OrganizationEntity,
  ApiKeyEntity,
  ProgramEntity,
  AffiliateEntity,
  ClickEntity,
  CustomerEntity,
  ConversionEntity,
  IntegrationEntity,
];

export function ormOptions(clientUrl: string, poolMax: number): Options {
  return {
    clientUrl,
    entities,
    extensions: [Migrator],
    migrations: { migrationsList, transactional: true, allOrNothing: true, snapshot: false, silent: true },
    pool: { min: 0, max: poolMax },
    forceUtcTimezone: true,
    allowGlobalContext: false,
    debug: false,
    discovery: { warnWhenNoEntities: false },
  };
}

/** Connects and applies every pending committed migration. */
export async function initOrm(clientUrl: string, poolMax: number): Promise<MikroORM> {
  const orm = await MikroORM.init(ormOptions(clientUrl, poolMax));
  await orm.getMigrator().up();
  return orm;
}
