import { BRANDING_DEFAULT_COLOR, type Branding, type UpdateBrandingBody } from '@affiliate-attribution/contract';
import type { MikroORM } from '@mikro-orm/postgresql';
import { sql } from 'kysely';
import { Db } from '../../db/sql.js';
import { NotFoundError } from '../../http/errors.js';

/** What the portal and e-mails need of an organization's branding, with the defaults applied. */
export interface BrandingLook {
  organizationName: string;
  logoUrl: string | null;
  color: string;
  /** The From display name of e-mails to partners: the sender name set, else the organization's name. */
  senderName: string;
}

interface BrandingRow {
  name: string;
  brand_logo_url: string | null;
  brand_color: string | null;
  mail_sender_name: string | null;
}

/**
 * The merchant's branding (issue 47, item 10): kept on the live organization (the account), which
 * its test twin shows too, so that a test partner sees the portal and e-mails as a real one will.
 */
const accountBranding = (
  organizationId: string,
) => sql<BrandingRow>`select a.name, a.brand_logo_url, a.brand_color, a.mail_sender_name
  from organizations o join organizations a on a.id = coalesce(o.live_organization_id, o.id)
 where o.id = ${organizationId}`;

const toBranding = (row: BrandingRow): Branding => ({
  logo_url: row.brand_logo_url,
  brand_color: row.brand_color,
  sender_name: row.mail_sender_name,
});

/** The look of an organization (live or test) for the portal and e-mails; undefined for an unknown one. */
export async function brandingLook(db: Db, organizationId: string): Promise<BrandingLook | undefined> {
  const row = await db.one(accountBranding(organizationId));
  if (!row) return undefined;
  return {
    organizationName: row.name,
    logoUrl: row.brand_logo_url,
    color: row.brand_color ?? BRANDING_DEFAULT_COLOR,
    senderName: row.mail_sender_name ?? row.name,
  };
}

export class BrandingService {
  constructor(private readonly orm: MikroORM) {}

  private get db(): Db {
    return Db.of(this.orm);
  }

  /** GET /api/branding: `accountId`, the live organization's id (the same in both modes). */
  async get(accountId: string): Promise<Branding> {
    const row = await this.db.one(accountBranding(accountId));
    if (!row) throw new NotFoundError('Organization not found');
    return toBranding(row);
  }

  /** PATCH /api/branding: the fields given (validated by the contract), null clearing one. */
  async update(accountId: string, body: UpdateBrandingBody): Promise<Branding> {
    const columns: [string, string | null | undefined][] = [
      ['brand_logo_url', body.logo_url],
      ['brand_color', body.brand_color],
      ['mail_sender_name', body.sender_name],
    ];
    const set = columns.filter(([, value]) => value !== undefined);
    if (set.length > 0)
      await this.db.rows(
        sql`update organizations set ${sql.join(set.map(([c, value]) => sql`${sql.ref(c)} = ${value}`))} where id = ${accountId}`,
      );
    return this.get(accountId);
  }
}
