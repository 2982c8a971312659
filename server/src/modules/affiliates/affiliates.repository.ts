import type { MikroORM } from '@mikro-orm/postgresql';
import type { AffiliateRule, CachedAffiliate } from '../../attribution/cache.js';
import { notifyChange } from '../../db/change-notifications.js';
import { pageInCreationOrder } from '../../db/created-order.js';
import { kyselyOf, readFromReplica, type NewRow, type StoredRow } from '../../db/database.js';
import { insertOnce, type Once } from '../../db/insert-once.js';
import { findOwnedRow, type OwnedTable } from '../../db/owned-row.js';
import { Db } from '../../db/sql.js';
import type { CursorPosition } from '../../http/pagination.js';
import { isUuid } from '../../http/serialize.js';
import { withEvents } from '../events/outbox.js';
import { lockPartnerForm, partnerFormOf } from '../tax-forms/partner-form.js';
import { erasePerson, erasureScope } from './erasure.js';
import { aliasesOf, holdToken, isTokenTaken, moveSlug, TokenTakenError } from './link-tokens.js';
import { sql } from 'kysely';

export type AffiliateRecord = StoredRow<'affiliates'>;

const ownerOf = (a: Pick<AffiliateRecord, 'organization_id' | 'id' | 'program_id'>) => ({
  organizationId: a.organization_id,
  affiliateId: a.id,
  programId: a.program_id,
});

const AFFILIATES_BY_ID: OwnedTable = { table: 'affiliates', notFound: 'Affiliate not found' };

/** The same, with the affiliate's aliases (link-tokens.ts) read in the same statement, in order. */
const AFFILIATES_WITH_ALIASES_BY_ID: OwnedTable = {
  ...AFFILIATES_BY_ID,
  extraColumns: (organization) =>
    `array(select l.token from affiliate_link_aliases l where l.organization_id = ${organization} and l.affiliate_id = t.id order by l.token) as aliases`,
};

/** Another membership of the organization holds this token as its slug or an alias (link-tokens.ts). */
export class SlugTakenError extends Error {
  constructor(readonly slug: string) {
    super(`slug "${slug}" is taken`);
  }
}

/** The affiliates module's only way to the database. */
export class AffiliatesRepository {
  constructor(private readonly orm: MikroORM) {}

  /**
   * One membership per (organization, program, email), by the idempotency rule (db/insert-once.ts):
   * the row this call created, or the one an earlier or concurrent request did (deduped). A slug
   * held by another membership, as its slug or an alias (link-tokens.ts), is a SlugTakenError; a
   * slug that the same membership took in a concurrent request answers that membership.
   */
  async insertMembership(row: NewRow<'affiliates'>): Promise<Once<AffiliateRecord>> {
    const existing = async () => (await this.findMembership(row.organization_id, row.program_id, row.email)).membership;
    try {
      return await insertOnce(
        'affiliate',
        // The affiliate.created event rides the insert (modules/events/outbox.ts). The new
        // membership starts with the partner's current tax form (one per e-mail: tax-forms/partner-form.ts).
        () =>
          Db.of(this.orm).transaction(async (db) => {
            await lockPartnerForm(db, row.organization_id, row.email);
            const insert = kyselyOf(this.orm)
              .insertInto('affiliates')
              .values({ ...row, ...(await partnerFormOf(db, row.organization_id, row.email)) })
              .onConflict((conflict) => conflict.columns(['organization_id', 'program_id', 'email']).doNothing())
              .returningAll();
            const [inserted] = await db.rows({
              compile: () => withEvents(insert, 'affiliate.created', row.organization_id).compile(kyselyOf(this.orm)),
            });
            if (inserted) await holdToken(db, ownerOf(inserted), inserted.slug);
            return inserted;
          }),
        existing,
      );
    } catch (err) {
      if (!isTokenTaken(err) && !(err instanceof TokenTakenError)) throw err;
      const raced = await existing();
      if (raced) return { row: raced, deduped: true };
      throw new SlugTakenError(row.slug);
    }
  }

  /** One page of the organization's affiliates, oldest first, optionally of one program or e-mail. */
  page(
    organizationId: string,
    filter: { program_id?: string; email?: string },
    after: CursorPosition | undefined,
    limit: number,
  ): Promise<AffiliateRecord[]> {
    return readFromReplica(this.orm, 'GET /api/affiliates', (source) => {
      let query = kyselyOf(source).selectFrom('affiliates').selectAll().where('organization_id', '=', organizationId);
      if (filter.program_id) query = query.where('program_id', '=', filter.program_id);
      if (filter.email) query = query.where('email', '=', filter.email);
      return pageInCreationOrder(query, after, limit).execute();
    });
  }

  /** The ownership rule (db/owned-row.ts): 403 for another organization's affiliate, 404 for none. */
  findOwned(organizationId: string, id: string): Promise<AffiliateRecord> {
    return findOwnedRow<AffiliateRecord>(Db.of(this.orm), AFFILIATES_BY_ID, organizationId, id);
  }

  /**
   * Changes an owned membership in one transaction; `change` decides from the stored row. A status
   * change is announced to every instance (db/change-notifications.ts) when it commits, as a
   * program change is: each drops the affiliate's cached status, so a disabled partner's links
   * stop attributing everywhere within the caches' bound. A new slug keeps the old one as an alias
   * (link-tokens.ts moveSlug: a SlugTakenError when another membership holds it); every instance
   * then drops the slugs it cached for the affiliate (`affiliate_links`).
   */
  updateOwned(
    organizationId: string,
    id: string,
    change: (
      current: AffiliateRecord,
    ) => Pick<
      AffiliateRecord,
      'name' | 'payout_email' | 'status' | 'commission_value' | 'payout_method' | 'stripe_account_id' | 'slug'
    >,
  ): Promise<AffiliateRecord> {
    return Db.of(this.orm).transaction(async (db) => {
      const current = await findOwnedRow<AffiliateRecord>(db, AFFILIATES_BY_ID, organizationId, id);
      const changes = change(current);
      if (changes.slug !== current.slug) {
        try {
          await moveSlug(db, ownerOf(current), current.slug, changes.slug);
        } catch (err) {
          if (err instanceof TokenTakenError || isTokenTaken(err)) throw new SlugTakenError(changes.slug);
          throw err;
        }
      }
      const update = kyselyOf(this.orm)
        .updateTable('affiliates')
        .set(changes)
        .where('organization_id', '=', current.organization_id)
        .where('id', '=', current.id)
        .returningAll();
      const [updated] = await db.rows({
        compile: () => withEvents(update, 'affiliate.updated', current.organization_id).compile(kyselyOf(this.orm)),
      });
      if (updated.status !== current.status || updated.commission_value !== current.commission_value)
        await notifyChange(db, { kind: 'affiliate', id: current.id });
      if (updated.slug !== current.slug) await notifyChange(db, { kind: 'affiliate_links', id: current.id });
      return updated;
    });
  }

  /**
   * Erases the person behind an owned membership (403/404 by the ownership rule), in one
   * transaction: every membership of the same e-mail in the organization and, for a live one, in
   * its test twin (erasure.ts says what goes). A membership already erased is answered as it is.
   * Answers the requested membership and the ids of every membership erased.
   */
  eraseOwned(organizationId: string, id: string, at: Date): Promise<{ erased: AffiliateRecord; ids: string[] }> {
    return Db.of(this.orm).transaction(async (db) => {
      const current = await findOwnedRow<AffiliateRecord>(db, AFFILIATES_BY_ID, organizationId, id);
      if (current.erased_at) return { erased: current, ids: [] };
      const erased: AffiliateRecord[] = [];
      for (const scope of await erasureScope(db, organizationId))
        erased.push(...(await erasePerson(db, this.orm, scope, current.email, at)));
      return { erased: erased.find((row) => row.id === current.id)!, ids: erased.map((row) => row.id) };
    });
  }

  /**
   * What attribution needs of the affiliate behind a slug (attribution/resolver.ts caches it): the
   * holder of the link token (link-tokens.ts), its slug or one of its aliases (the links an import
   * brought, a slug changed since): one namespace, so no two affiliates answer the same token.
   */
  async findBySlug(organizationId: string, slug: string): Promise<CachedAffiliate | undefined> {
    return Db.of(this.orm).one(
      sql<CachedAffiliate>`select affiliate_id as id, program_id from affiliate_link_tokens where organization_id = ${organizationId} and token = ${slug}`,
    );
  }

  /** An affiliate's aliases (link-tokens.ts), for showing. */
  aliases(organizationId: string, id: string): Promise<string[]> {
    return aliasesOf(Db.of(this.orm), organizationId, id);
  }

  /** An owned affiliate (the ownership rule, as findOwned) with its aliases, in one statement. */
  async findOwnedWithAliases(
    organizationId: string,
    id: string,
  ): Promise<{ affiliate: AffiliateRecord; aliases: string[] }> {
    const { aliases, ...affiliate } = await findOwnedRow<AffiliateRecord & { aliases: string[] }>(
      Db.of(this.orm),
      AFFILIATES_WITH_ALIASES_BY_ID,
      organizationId,
      id,
    );
    return { affiliate, aliases };
  }

  /** An affiliate's status, own rate and e-mails, for attribution and the program's rules (attribution/resolver.ts caches it); undefined when there is no such affiliate. */
  async findRule(organizationId: string, id: string): Promise<AffiliateRule | undefined> {
    const row = await kyselyOf(this.orm)
      .selectFrom('affiliates')
      .select(['status', 'commission_value', 'email', 'portal_sign_in_ip', 'portal_sign_in_user_agent'])
      .where('organization_id', '=', organizationId)
      .where('id', '=', id)
      .executeTakeFirst();
    return (
      row && {
        ...row,
        status: row.status,
        commission_value: row.commission_value ?? null,
        portal_sign_in_ip: row.portal_sign_in_ip ?? null,
        portal_sign_in_user_agent: row.portal_sign_in_user_agent ?? null,
      }
    );
  }

  /**
   * Whether the program is this organization's and, if so, its membership of this e-mail: one
   * statement, so that a repeat is answered by it alone.
   */
  async findMembership(
    organizationId: string,
    programId: string,
    email: string,
  ): Promise<{ programFound: boolean; membership?: AffiliateRecord }> {
    if (!isUuid(programId)) return { programFound: false };
    const found = await kyselyOf(this.orm)
      .selectFrom('programs as p')
      .leftJoin('affiliates as a', (join) =>
        join
          .onRef('a.program_id', '=', 'p.id')
          .onRef('a.organization_id', '=', 'p.organization_id')
          .on('a.email', '=', email),
      )
      .selectAll('a')
      .where('p.id', '=', programId)
      .where('p.organization_id', '=', organizationId)
      .executeTakeFirst();
    if (!found) return { programFound: false };
    return { programFound: true, membership: found.id === null ? undefined : (found as AffiliateRecord) };
  }
}
