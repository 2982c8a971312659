import type { MikroORM } from '@mikro-orm/postgresql';
import type { WebhookProvider } from '@affiliate-attribution/contract';
import { kyselyOf, type NewRow, type StoredRow } from '../../db/database.js';

export type IntegrationRecord = StoredRow<'integrations'>;

/** The integrations module's only way to the database: one signing secret per (organization, provider). */
export class IntegrationsRepository {
  constructor(private readonly orm: MikroORM) {}

  list(organizationId: string): Promise<IntegrationRecord[]> {
    return kyselyOf(this.orm).selectFrom('integrations').selectAll().where('organization_id', '=', organizationId).execute();
  }

  /** Stores the provider's secret, replacing the one stored before (a PUT: the last one wins, no dedupe). */
  upsert(row: NewRow<'integrations'>): Promise<IntegrationRecord> {
    return kyselyOf(this.orm)
      .insertInto('integrations')
      .values(row)
      .onConflict((conflict) =>
        conflict.columns(['organization_id', 'provider']).doUpdateSet((eb) => ({ signing_secret: eb.ref('excluded.signing_secret'), updated_at: eb.ref('excluded.updated_at') })),
      )
      .returningAll()
      .executeTakeFirstOrThrow();
  }

  async remove(organizationId: string, provider: WebhookProvider): Promise<void> {
    await kyselyOf(this.orm).deleteFrom('integrations').where('organization_id', '=', organizationId).where('provider', '=', provider).execute();
  }

  async signingSecret(organizationId: string, provider: WebhookProvider): Promise<string | undefined> {
    const row = await kyselyOf(this.orm)
      .selectFrom('integrations')
      .select('signing_secret')
      .where('organization_id', '=', organizationId)
      .where('provider', '=', provider)
      .executeTakeFirst();
    return row?.signing_secret;
  }
}
