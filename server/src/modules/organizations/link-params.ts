import type { MikroORM } from '@mikro-orm/postgresql';
import { LINK_PARAMS_MAX } from '@affiliate-attribution/contract';
import { Db } from '../../db/sql.js';
import { isUuid } from '../../http/serialize.js';
import { sql } from 'kysely';

/**
 * An organization's link parameters: the query parameters whose value names a partner (`?ref=ada`,
 * Rewardful's `?via=ada`). Kept on the account (the live organization), so that live and test mode
 * (the twin) read one list, and the snippet, which knows only the account's id, reads the same.
 */

/** What an organization starts with, and what the public endpoint answers for an unknown one. */
export const DEFAULT_LINK_PARAMS: readonly string[] = ['ref'];

/**
 * The parameter each import source's published links carry, as their documentation names it
 * (docs/imports.md cites the pages): Rewardful `?via=`, FirstPromoter `?fpr=` (its default of
 * several it accepts), PartnerStack `?gspk=` (the partner key, Base64-encoded: the snippet and the
 * SDK decode it), Tolt and Tapfiliate `?ref=` (already the default). A CSV has none.
 */
export const SOURCE_LINK_PARAMS: Readonly<Record<string, string>> = {
  rewardful: 'via',
  firstpromoter: 'fpr',
  partnerstack: 'gspk',
  tolt: 'ref',
  tapfiliate: 'ref',
};

/** The account (live organization) of an organization id, a live one or a test twin. */
const accountOf = (organizationId: string) =>
  sql<string>`(select coalesce(live_organization_id, id) from organizations where id = ${organizationId})`;

export async function linkParamsOf(db: Db, organizationId: string): Promise<string[]> {
  const row = await db.one(
    sql<{ link_params: string[] }>`select link_params from organizations where id = ${accountOf(organizationId)}`,
  );
  return row?.link_params ?? [...DEFAULT_LINK_PARAMS];
}

/**
 * Adds a parameter to the account's list, at its end, unless it is there already or the list is
 * full (the merchant then chooses what to drop in the dashboard); one statement, so two imports
 * starting together cannot lose one another's name.
 */
export async function addLinkParam(db: Db, organizationId: string, name: string): Promise<void> {
  await db.rows(
    sql`update organizations set link_params = array_append(link_params, ${name}::text)
      where id = ${accountOf(organizationId)} and not (${name}::text = any(link_params)) and cardinality(link_params) < ${LINK_PARAMS_MAX}`,
  );
}

/** The import's one call when it starts: its source's parameter joins the account's list. */
export async function addSourceLinkParam(db: Db, organizationId: string, source: string): Promise<void> {
  const name = SOURCE_LINK_PARAMS[source];
  if (name) await addLinkParam(db, organizationId, name);
}

export class LinkParamsService {
  private readonly db: Db;

  constructor(orm: MikroORM) {
    this.db = Db.of(orm);
  }

  get(organizationId: string): Promise<string[]> {
    return linkParamsOf(this.db, organizationId);
  }

  /** Replaces the list (validated by the contract: 1 to 10 distinct safe names). */
  async set(organizationId: string, names: string[]): Promise<string[]> {
    const row = await this.db.one(
      sql<{
        link_params: string[];
      }>`update organizations set link_params = ${names}::text[] where id = ${accountOf(organizationId)} returning link_params`,
    );
    return row?.link_params ?? [...DEFAULT_LINK_PARAMS];
  }

  /**
   * For the public endpoint, by the account id the snippet tag holds: an id that names no live
   * organization answers the default, as a live one that kept it would (nothing revealed).
   */
  async ofAccount(accountId: string): Promise<string[]> {
    if (!isUuid(accountId)) return [...DEFAULT_LINK_PARAMS];
    const row = await this.db.one(
      sql<{
        link_params: string[];
      }>`select link_params from organizations where id = ${accountId} and live_organization_id is null and deletion_requested_at is null`,
    );
    return row?.link_params ?? [...DEFAULT_LINK_PARAMS];
  }
}
