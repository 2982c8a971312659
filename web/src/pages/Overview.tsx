import { useEffect, useMemo, useRef, useState, type ReactNode } from 'react';
import { Link } from 'react-router';
import { initClient } from '@ts-rest/core';
import { reportsContract, type ReportTotals, type TimeseriesPoint } from '@affiliate-attribution/contract';
import {
  BarController,
  BarElement,
  CategoryScale,
  Chart,
  Filler,
  Legend,
  LinearScale,
  LineController,
  LineElement,
  PointElement,
  Tooltip,
} from 'chart.js';
import { api, data, fetchInMode } from '../api';
import { AffiliateLink, useAffiliateNames } from './AffiliateName';
import { CommissionsByStatus, Empty, Field, FormError, Loading, PageHeader, money, useLoad } from '../ui';
import { DataTable } from '../table';
import { mainCurrency } from './main-currency';

Chart.register(
  LineController,
  LineElement,
  PointElement,
  BarController,
  BarElement,
  CategoryScale,
  LinearScale,
  Filler,
  Legend,
  Tooltip,
);

// The reports resource of the same contract (GET /api/reports/…), on the same session and in the same mode.
const reports = initClient(reportsContract, {
  baseUrl: '',
  baseHeaders: {},
  credentials: 'same-origin',
  throwOnUnknownStatus: false,
  api: fetchInMode,
});

const PERIODS = {
  '30d': { label: 'Last 30 days', days: 30, interval: 'day' },
  '90d': { label: 'Last 90 days', days: 90, interval: 'week' },
  '12m': { label: 'Last 12 months', days: 365, interval: 'month' },
} as const;
type PeriodKey = keyof typeof PERIODS;

/** What the chart can show: a figure of each point (and of the period's totals), as the API gives it. */
const METRICS = {
  net_revenue: { label: 'Net revenue', money: true, of: (p: TimeseriesPoint | ReportTotals) => p.net_revenue },
  revenue: { label: 'Gross revenue', money: true, of: (p: TimeseriesPoint | ReportTotals) => p.revenue },
  refunded: { label: 'Refunds', money: true, of: (p: TimeseriesPoint | ReportTotals) => p.refunded },
  pending: {
    label: 'Commissions pending',
    money: true,
    of: (p: TimeseriesPoint | ReportTotals) => p.commissions.pending,
  },
  approved: {
    label: 'Commissions approved',
    money: true,
    of: (p: TimeseriesPoint | ReportTotals) => p.commissions.approved,
  },
  clicks: { label: 'Clicks', money: false, of: (p: TimeseriesPoint | ReportTotals) => p.clicks },
  customers: { label: 'Signups', money: false, of: (p: TimeseriesPoint | ReportTotals) => p.customers },
  conversions: { label: 'Conversions', money: false, of: (p: TimeseriesPoint | ReportTotals) => p.conversions },
} as const;
type MetricKey = keyof typeof METRICS;

const dayStart = (d: Date) => new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate()));

function periodLabel(iso: string, interval: string): string {
  const d = new Date(iso);
  return interval === 'month'
    ? d.toLocaleDateString(undefined, { month: 'short', year: '2-digit', timeZone: 'UTC' })
    : d.toLocaleDateString(undefined, { month: 'short', day: 'numeric', timeZone: 'UTC' });
}

function LineChart({
  points,
  total,
  metric,
  currency,
  interval,
}: {
  points: TimeseriesPoint[];
  total: ReportTotals | undefined;
  metric: MetricKey;
  currency: string;
  interval: string;
}) {
  const canvas = useRef<HTMLCanvasElement>(null);
  const m = METRICS[metric];
  useEffect(() => {
    if (!canvas.current) return;
    const chart = new Chart(canvas.current, {
      type: interval === 'day' ? 'line' : 'bar',
      data: {
        labels: points.map((p) => periodLabel(p.period, interval)),
        datasets: [
          {
            label: m.label,
            data: points.map(m.of),
            borderColor: '#2350c8',
            backgroundColor: 'rgba(35, 80, 200, 0.18)',
            fill: true,
            tension: 0.25,
            pointRadius: 2,
          },
        ],
      },
      options: {
        responsive: true,
        maintainAspectRatio: false,
        animation: false,
        plugins: {
          legend: { display: false },
          tooltip: {
            callbacks: { label: (ctx) => (m.money ? money(Number(ctx.parsed.y), currency) : String(ctx.parsed.y)) },
          },
        },
        scales: { y: { beginAtZero: true, ticks: { precision: m.money ? undefined : 0 } } },
      },
    });
    return () => chart.destroy();
  }, [points, metric, currency, interval, m]);
  const sum = total ? m.of(total) : 0;
  return (
    <div className="chart">
      <canvas
        ref={canvas}
        role="img"
        aria-label={`${m.label} per ${interval}, ${points.length} periods, total ${m.money ? money(sum, currency) : sum}`}
      />
    </div>
  );
}

export default function Overview() {
  const [period, setPeriod] = useState<PeriodKey>('30d');
  const [metric, setMetric] = useState<MetricKey>('net_revenue');
  const [currency, setCurrency] = useState<string>();
  const range = useMemo(() => {
    const to = new Date(dayStart(new Date()).getTime() + 86_400_000);
    return { from: new Date(to.getTime() - PERIODS[period].days * 86_400_000).toISOString(), to: to.toISOString() };
  }, [period]);
  const series = useLoad(
    async () => data(await reports.timeseries({ query: { ...range, interval: PERIODS[period].interval } })),
    [range],
  );
  const top = useLoad(
    async () => data(await reports.affiliates({ query: { ...range, limit: 5 } })).affiliates,
    [range],
  );
  // What is owed now: approved commissions not yet paid, over the longest period a report covers (the API's totals per currency).
  const owed = useLoad(async () => {
    const to = new Date(dayStart(new Date()).getTime() + 86_400_000);
    return data(
      await reports.timeseries({
        query: {
          from: new Date(to.getTime() - 1095 * 86_400_000).toISOString(),
          to: to.toISOString(),
          interval: 'month',
        },
      }),
    ).totals;
  }, []);
  const oldestProgram = useLoad(
    async () => data(await api.programs.list({ query: { limit: 1 } })).programs[0]?.currency,
    [],
  );
  // An affiliate with sales in several currencies ranks once per currency: its rows say which.
  const inSeveralCurrencies = useMemo(() => {
    const ids = (top.data ?? []).map((r) => r.affiliate_id);
    return new Set(ids.filter((id, i) => ids.indexOf(id) !== i));
  }, [top.data]);
  const names = useAffiliateNames(top.data?.map((r) => r.affiliate_id));

  const currencies = [...new Set((series.data?.points ?? []).map((p) => p.currency))];
  const shown =
    currency && currencies.includes(currency)
      ? currency
      : (mainCurrency(currencies, owed.data ?? [], oldestProgram.data) ?? currencies[0]);
  const points = (series.data?.points ?? []).filter((p) => p.currency === shown);
  const total = series.data?.totals.find((t) => t.currency === shown);
  const owedNow = (owed.data ?? []).filter((t) => t.commissions.approved !== 0);
  const notBuilt = series.error?.status === 404 && !series.error.message.includes('rogram');

  return (
    <section>
      <PageHeader title="Overview" />
      <div className="filters">
        <Field label="Period" name="period">
          {(attrs) => (
            <select {...attrs} value={period} onChange={(e) => setPeriod(e.target.value as PeriodKey)}>
              {Object.entries(PERIODS).map(([key, p]) => (
                <option key={key} value={key}>
                  {p.label}
                </option>
              ))}
            </select>
          )}
        </Field>
        {currencies.length > 1 && (
          <Field label="Currency" name="currency">
            {(attrs) => (
              <select {...attrs} value={shown} onChange={(e) => setCurrency(e.target.value)}>
                {currencies.map((c) => (
                  <option key={c}>{c}</option>
                ))}
              </select>
            )}
          </Field>
        )}
      </div>
      {notBuilt ? (
        <Empty title="Reports are not available on this server yet">
          <p>
            Meanwhile, see <Link to="/customers">conversions</Link> and <Link to="/commissions">commissions</Link>.
          </p>
        </Empty>
      ) : (
        <FormError error={series.error} />
      )}
      {/* The main currency is known once the long-run totals and the oldest program are: no flash of another currency first. */}
      {(series.loading && !series.data) ||
      (owed.loading && !owed.data) ||
      (oldestProgram.loading && !oldestProgram.data) ? (
        <Loading />
      ) : (
        series.data && (
          <>
            <div className="kpis">
              <Kpi label="Clicks" value={String(total?.clicks ?? 0)} />
              <Kpi label="Signups" value={String(total?.customers ?? 0)} />
              <Kpi label="Conversions" value={String(total?.conversions ?? 0)} />
              <Kpi label="Gross revenue" value={shown ? money(total?.revenue ?? 0, shown) : '—'} />
              <Kpi label="Refunds" value={shown ? money(total?.refunded ?? 0, shown) : '—'} />
              <Kpi label="Net revenue" value={shown ? money(total?.net_revenue ?? 0, shown) : '—'} />
              <Kpi
                label="Commissions"
                value={total && shown ? <CommissionsByStatus totals={total.commissions} currency={shown} /> : '—'}
              />
              <Kpi
                label="Owed now (approved)"
                value={
                  owedNow.length > 0
                    ? owedNow.map((t) => money(t.commissions.approved, t.currency)).join(' · ')
                    : shown
                      ? money(0, shown)
                      : '—'
                }
                loading={owed.loading}
                to="/commissions"
              />
            </div>
            {points.length === 0 ? (
              <Empty title="Nothing in this period yet">
                <p>
                  Follow <Link to="/get-started">Get started</Link>: a program, an affiliate, the tracking snippet and
                  two calls from your backend. Clicks, signups and sales then appear here.
                </p>
              </Empty>
            ) : (
              <>
                <div className="filters">
                  <Field label="Chart" name="metric">
                    {(attrs) => (
                      <select {...attrs} value={metric} onChange={(e) => setMetric(e.target.value as MetricKey)}>
                        {Object.entries(METRICS).map(([key, m]) => (
                          <option key={key} value={key}>
                            {m.label}
                          </option>
                        ))}
                      </select>
                    )}
                  </Field>
                </div>
                <LineChart
                  points={points}
                  total={total}
                  metric={metric}
                  currency={shown}
                  interval={PERIODS[period].interval}
                />
              </>
            )}
          </>
        )
      )}
      {!notBuilt && (
        <>
          <h2>Top affiliates</h2>
          <DataTable
            label="Top affiliates"
            rows={top.data}
            loading={top.loading}
            error={top.error}
            rowKey={(r) => `${r.affiliate_id}-${r.currency}`}
            empty={
              <p className="muted">
                No affiliate activity in this period: share referral links from the Affiliates page.
              </p>
            }
            columns={[
              {
                header: 'Affiliate',
                rowHeader: true,
                cell: (r) => (
                  <AffiliateLink
                    id={r.affiliate_id}
                    names={names}
                    suffix={inSeveralCurrencies.has(r.affiliate_id) ? ` (${r.currency})` : ''}
                  />
                ),
              },
              { header: 'Clicks', cell: (r) => r.clicks },
              { header: 'Signups', cell: (r) => r.customers },
              { header: 'Conversions', cell: (r) => r.conversions },
              { header: 'Net revenue', cell: (r) => money(r.net_revenue, r.currency) },
              { header: 'Refunds', cell: (r) => money(r.refunded, r.currency) },
              {
                header: 'Commissions',
                cell: (r) => <CommissionsByStatus totals={r.commissions} currency={r.currency} />,
              },
            ]}
          />
        </>
      )}
    </section>
  );
}

function Kpi({ label, value, to, loading }: { label: string; value: ReactNode; to?: string; loading?: boolean }) {
  return (
    <div className="kpi">
      <div className="label">{to ? <Link to={to}>{label}</Link> : label}</div>
      {loading ? (
        <div className="value" role="status">
          Loading…
        </div>
      ) : (
        <div className="value">{value}</div>
      )}
    </div>
  );
}
