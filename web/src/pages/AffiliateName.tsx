import { Link } from 'react-router';
import { api } from '../api';
import { useLoad } from '../ui';

/**
 * Partners' names for the rows of a list that carry only `affiliate_id` (commissions, payouts,
 * conversions): one `GET /api/affiliates/{id}` per partner not yet seen in this tab, at most a page's
 * worth at a time, kept for the session (a name seldom changes; a reload refreshes it).
 */
const known = new Map<string, Promise<string | undefined>>();

function nameOf(id: string): Promise<string | undefined> {
  let found = known.get(id);
  if (!found) {
    found = api.affiliates.get({ params: { id } }).then(
      (res) => (res.status === 200 ? (res.body.data.affiliate.name ?? res.body.data.affiliate.email) : undefined),
      () => undefined,
    );
    // A failure is not remembered: the next list asks again.
    void found.then((name) => name === undefined && known.delete(id));
    known.set(id, found);
  }
  return found;
}

/** The names of these partners (by affiliate id), loaded after the rows. */
export function useAffiliateNames(ids: readonly string[] | undefined) {
  const unique = [...new Set(ids ?? [])].sort();
  const loaded = useLoad(
    async () => new Map(await Promise.all(unique.map(async (id) => [id, await nameOf(id)] as const))),
    [unique.join(',')],
  );
  return loaded.data;
}

export type AffiliateNames = ReturnType<typeof useAffiliateNames>;

/** The partner's name, linking to their page ("Affiliate" until it is known). */
export function AffiliateLink({ id, names, suffix }: { id: string; names: AffiliateNames; suffix?: string }) {
  return (
    <Link to={`/affiliates/${id}`}>
      {names?.get(id) ?? 'Affiliate'}
      {suffix}
    </Link>
  );
}
