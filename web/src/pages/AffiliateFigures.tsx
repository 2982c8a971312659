import type { AffiliateReportRow } from '@affiliate-attribution/contract';
import { api, data } from '../api';
import type { ReactNode } from 'react';
import { CommissionsByStatus, money, useLoad } from '../ui';

/** The period of the affiliates list's figures: the last 30 days, to the end of today (UTC), as the overview's default. */
export const FIGURES_DAYS = 30;

function lastDays(days: number): { from: string; to: string } {
  const now = new Date();
  const to = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate()) + 86_400_000;
  return { from: new Date(to - days * 86_400_000).toISOString(), to: new Date(to).toISOString() };
}

/** The report pages we follow at most: 100 rows each, one per affiliate and currency of a page of at most 100 affiliates. */
const MAX_REPORT_PAGES = 10;

/**
 * The figures of these affiliates (a page of the list) over the last 30 days, one report row per
 * affiliate and currency (`GET /api/reports/affiliates?affiliate_id=…`). Loaded after the list, never
 * before it: `affiliates` is undefined until the list is there, and a new page loads new figures.
 */
export function useAffiliateFigures(affiliates: { id: string }[] | undefined) {
  return useLoad(async () => {
    const byAffiliate = new Map<string, AffiliateReportRow[]>();
    if (!affiliates || affiliates.length === 0) return byAffiliate;
    const query = { ...lastDays(FIGURES_DAYS), affiliate_id: affiliates.map((a) => a.id).join(','), limit: 100 };
    let cursor: string | undefined;
    for (let page = 0; page < MAX_REPORT_PAGES; page++) {
      const report = data(await api.reports.affiliates({ query: { ...query, cursor } }));
      for (const row of report.affiliates)
        byAffiliate.set(row.affiliate_id, [...(byAffiliate.get(row.affiliate_id) ?? []), row]);
      if (!report.next_cursor) break;
      cursor = report.next_cursor;
    }
    return byAffiliate;
  }, [affiliates]);
}

export type AffiliateFigures = ReturnType<typeof useAffiliateFigures>;

function Figure({ label, value }: { label: string; value: ReactNode }) {
  return (
    <div>
      <dt>{label}</dt>
      <dd>{value}</dd>
    </div>
  );
}

/** One affiliate's figures: a line per currency; zeros and dashes without activity; a short message while loading or when the report fails. */
export function FiguresCell({ affiliateId, figures }: { affiliateId: string; figures: AffiliateFigures }) {
  if (figures.error) return <span className="muted">Figures unavailable</span>;
  if (!figures.data || figures.loading) return <span className="muted">Loading…</span>;
  const rows = figures.data.get(affiliateId) ?? [];
  const lines = rows.length > 0 ? rows : [undefined];
  // Two short lists a line (counts, then amounts), so that the column stays narrow beside the others.
  return (
    <>
      {lines.map((r) => (
        <div className="figures" key={r?.currency ?? 'none'}>
          <dl>
            <Figure label="Clicks" value={String(r?.clicks ?? 0)} />
            <Figure label="Signups" value={String(r?.customers ?? 0)} />
            <Figure label="Conversions" value={String(r?.conversions ?? 0)} />
          </dl>
          <dl>
            <Figure label="Net revenue" value={r ? money(r.net_revenue, r.currency) : '—'} />
            <Figure label="Earned" value={r ? money(r.commissions.earned, r.currency) : '—'} />
            <Figure
              label="Commissions"
              value={r ? <CommissionsByStatus totals={r.commissions} currency={r.currency} /> : '—'}
            />
          </dl>
        </div>
      ))}
    </>
  );
}
