import type { Sql } from '../db/sql.js';
import { AttributionNotFoundError, AttributionWindowExpiredError } from '../http/errors.js';
import { isUuid } from '../http/serialize.js';
import { isClickWindowExpired } from './windows.js';

/** Issued cookie ids carry this prefix; slugs cannot contain "_", so the two never collide. */
export const COOKIE_ID_PREFIX = 'ck_';

export interface ClickAttributionInput {
  click_id?: string | undefined;
  cookie_id?: string | undefined;
  ref?: string | undefined;
}

export interface Attribution {
  affiliate_id: string;
  program_id: string;
  click_id: string | null;
}

export const hasClickAttribution = (input: ClickAttributionInput): boolean =>
  Boolean(input.click_id || input.cookie_id || input.ref);

interface ClickRow {
  id: string;
  affiliate_id: string;
  program_id: string;
  occurred_at: Date | string;
  click_window_days: number;
}

const CLICK_SELECT = `select c.id, c.affiliate_id, c.program_id, c.occurred_at, p.click_window_days
  from clicks c join programs p on p.id = c.program_id where c.organization_id = ?`;

/**
 * Resolves click-side attribution within one organization, in the order click_id, cookie_id, ref.
 * A click is subject to its program's click window at `at` (410); a slug (in `ref`, or a raw slug
 * the snippet stored in `cookie_id`) credits its affiliate now, with no window. Anything this
 * organization did not issue: 404 "No attribution found".
 */
export async function resolveClickAttribution(
  sql: Sql,
  organizationId: string,
  input: ClickAttributionInput,
  at: Date,
): Promise<Attribution> {
  let click: ClickRow | undefined;
  if (input.click_id) {
    if (!isUuid(input.click_id)) throw new AttributionNotFoundError();
    click = await sql.one<ClickRow>(`${CLICK_SELECT} and c.id = ?`, [organizationId, input.click_id]);
  } else if (input.cookie_id?.startsWith(COOKIE_ID_PREFIX)) {
    click = await sql.one<ClickRow>(`${CLICK_SELECT} and c.cookie_id = ?`, [organizationId, input.cookie_id]);
  } else {
    const slug = input.cookie_id ?? input.ref;
    const affiliate = slug ? await findAffiliateBySlug(sql, organizationId, slug) : undefined;
    if (!affiliate) throw new AttributionNotFoundError();
    return { affiliate_id: affiliate.id, program_id: affiliate.program_id, click_id: null };
  }
  if (!click) throw new AttributionNotFoundError();
  if (isClickWindowExpired(new Date(click.occurred_at), click.click_window_days, at)) {
    throw new AttributionWindowExpiredError();
  }
  return { affiliate_id: click.affiliate_id, program_id: click.program_id, click_id: click.id };
}

export interface AffiliateRef {
  id: string;
  program_id: string;
  click_window_days: number;
}

export function findAffiliateBySlug(sql: Sql, organizationId: string, slug: string): Promise<AffiliateRef | undefined> {
  return sql.one<AffiliateRef>(
    `select a.id, a.program_id, p.click_window_days from affiliates a join programs p on p.id = a.program_id
      where a.organization_id = ? and a.slug = ?`,
    [organizationId, slug.toLowerCase()],
  );
}
