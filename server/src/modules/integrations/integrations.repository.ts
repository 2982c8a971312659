import type { MikroORM } from '@mikro-orm/postgresql';
import type { IntegrationProvider } from '@affiliate-attribution/contract';
import { kyselyOf, type NewRow, type StoredRow } from '../../db/database.js';

export type IntegrationRecord = StoredRow<'integrations'>;

/**
 * The integrations module's only way to the database: per (organization, provider), a payment
 * provider's signing secret or a payout rail's credentials (both sealed).
 */
export class IntegrationsRepository {
  constructor(private readonly orm: MikroORM) {}

  list(organizationId: string): Promise<IntegrationRecord[]> {
    return kyselyOf(this.orm)
      .selectFrom('integrations')
      .selectAll()
      .where('organization_id', '=', organizationId)
      .execute();
  }

  /** Stores the provider's secret or credentials, replacing those stored before (a PUT: the last one wins, no dedupe). */
  upsert(row: NewRow<'integrations'>): Promise<IntegrationRecord> {
    return kyselyOf(this.orm)
      .insertInto('integrations')
      .values(row)
      .onConflict((conflict) =>
        conflict.columns(['organization_id', 'provider']).doUpdateSet((eb) => ({
          signing_secret: eb.ref('excluded.signing_secret'),
          credentials: eb.ref('excluded.credentials'),
          updated_at: eb.ref('excluded.updated_at'),
        })),
      )
      .returningAll()
      .executeTakeFirstOrThrow();
  }

  async remove(organizationId: string, provider: IntegrationProvider): Promise<void> {
    await kyselyOf(this.orm)
      .deleteFrom('integrations')
      .where('organization_id', '=', organizationId)
      .where('provider', '=', provider)
      .execute();
  }

  async stored(
    organizationId: string,
    provider: IntegrationProvider,
  ): Promise<Pick<IntegrationRecord, 'signing_secret' | 'credentials'> | undefined> {
    return kyselyOf(this.orm)
      .selectFrom('integrations')
      .select(['signing_secret', 'credentials'])
      .where('organization_id', '=', organizationId)
      .where('provider', '=', provider)
      .executeTakeFirst();
  }
}
