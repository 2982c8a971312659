import { timingSafeEqual, createHash } from 'node:crypto';
import type { RequestHandler, Response } from 'express';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type pg from 'pg';
import type { ReplicaRouting } from '../db/replica-reads.js';
import type { Db } from '../db/sql.js';
import { watchOperations } from './operational-metrics.js';
import { contract } from '@affiliate-attribution/contract';
import { sendError } from './error-handler.js';
import type { PipelineRequest, Stage } from './pipeline.js';
import { pathOf } from './security.js';

declare global {
  // eslint-disable-next-line @typescript-eslint/no-namespace -- Express's types declare Request in the global namespace Express: adding a field is merging into it
  namespace Express {
    interface Request {
      /** A provider webhook's receipt outcome (processed, ignored, duplicate), for the metrics. */
      webhookOutcome?: string;
    }
  }
}

interface RoutePattern {
  method: string;
  pattern: string;
  regex: RegExp;
}

function isRoute(value: unknown): value is { method: string; path: string } {
  return (
    typeof value === 'object' &&
    value !== null &&
    'method' in value &&
    'path' in value &&
    typeof (value as { path: unknown }).path === 'string'
  );
}

/** Every route of the contract, plus the operational ones, as label-safe patterns. */
export function contractRoutePatterns(): RoutePattern[] {
  const patterns: RoutePattern[] = [];
  const walk = (node: unknown): void => {
    if (isRoute(node)) {
      const regex = new RegExp(
        '^' +
          node.path
            .split('/')
            .map((segment) => (segment.startsWith(':') ? '[^/]+' : segment.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')))
            .join('/') +
          '/?$',
      );
      patterns.push({ method: node.method.toUpperCase(), pattern: node.path, regex });
      return;
    }
    if (typeof node === 'object' && node !== null) for (const child of Object.values(node)) walk(child);
  };
  walk(contract);
  for (const path of ['/health', '/ready', '/metrics', '/snippet.js']) {
    patterns.push({ method: 'GET', pattern: path, regex: new RegExp(`^${path.replace('.', '\\.')}$`) });
  }
  return patterns;
}

/**
 * The service's Prometheus metrics, on a registry of its own (several apps in one process, as in
 * the tests, do not collide). Labels are route patterns (`/api/customers/:id`), never raw URLs,
 * so their number stays bounded whatever clients send.
 */
export class Metrics {
  readonly registry = new Registry();
  readonly httpRequests: Counter<'method' | 'route' | 'status'>;
  readonly httpDuration: Histogram<'method' | 'route' | 'status'>;
  readonly clicks: Counter<'source'>;
  readonly conversions: Counter<'outcome'>;
  readonly customers: Counter<'outcome'>;
  readonly webhooks: Counter<'provider' | 'outcome'>;
  readonly rateLimited: Counter<'limit'>;
  readonly jobFailures: Counter<'queue'>;
  private readonly routes = contractRoutePatterns();

  constructor(options: { defaultMetrics?: boolean } = {}) {
    if (options.defaultMetrics ?? true) collectDefaultMetrics({ register: this.registry });
    const registers = [this.registry];
    this.httpRequests = new Counter({
      name: 'http_requests_total',
      help: 'HTTP requests answered, by method, route pattern and status.',
      labelNames: ['method', 'route', 'status'],
      registers,
    });
    this.httpDuration = new Histogram({
      name: 'http_request_duration_seconds',
      help: 'Time to answer HTTP requests, by method, route pattern and status.',
      labelNames: ['method', 'route', 'status'],
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers,
    });
    this.clicks = new Counter({
      name: 'clicks_recorded_total',
      help: 'Clicks recorded, by source (api: POST /api/clicks; snippet: the public tracking endpoint); a repeat capture of the same visit, answered with its earlier click, is not counted.',
      labelNames: ['source'],
      registers,
    });
    this.conversions = new Counter({
      name: 'conversions_total',
      help: 'Conversion writes answered with success: created, or deduped (a repeat of an existing external_id).',
      labelNames: ['outcome'],
      registers,
    });
    this.customers = new Counter({
      name: 'customers_total',
      help: 'Customer writes answered with success: created or deduped.',
      labelNames: ['outcome'],
      registers,
    });
    this.webhooks = new Counter({
      name: 'webhook_events_total',
      help: 'Provider webhook deliveries, by provider and outcome (processed, ignored, duplicate, rejected, failed).',
      labelNames: ['provider', 'outcome'],
      registers,
    });
    this.rateLimited = new Counter({
      name: 'rate_limited_requests_total',
      help: 'Requests refused with 429, by limit.',
      labelNames: ['limit'],
      registers,
    });
    this.jobFailures = new Counter({
      name: 'job_failures_total',
      help: 'Runs of a scheduled job that failed in this process, by pg-boss queue (click-retention, webhook-retention); each is logged at error, and pg-boss retries it.',
      labelNames: ['queue'],
      registers,
    });
  }

  /** A background job's run failed (modules/clicks/click-retention.ts): counted by queue. */
  readonly jobFailed = (queue: string): void => {
    this.jobFailures.inc({ queue });
  };

  private operationsWatched = false;

  /** The database-backed gauges (job queue, payouts in processing, report lag, webhook backlog) and the pool's (http/operational-metrics.ts). */
  watchOperations(pool: pg.Pool, db: Db): void {
    if (this.operationsWatched) return;
    this.operationsWatched = true;
    watchOperations(this.registry, pool, db);
  }

  private replicasWatched = false;

  /** The read replicas' state (db/replica-reads.ts): which answer, and the reads the primary served in their stead. */
  watchReplicas(routing: ReplicaRouting): void {
    if (this.replicasWatched) return;
    this.replicasWatched = true;
    const registers = [this.registry];
    const fallbacks = new Counter({
      name: 'database_replica_fallback_reads_total',
      help: 'Reads meant for a read replica (lists, reports) that the primary served because no replica answered, by read.',
      labelNames: ['read'],
      registers,
    });
    routing.onFallback((read) => fallbacks.inc({ read }));
    new Gauge({
      name: 'database_replica_up',
      help: 'Whether reads go to this read replica (1), or it stopped answering and they go to the primary (0).',
      labelNames: ['replica'],
      registers,
      collect() {
        for (const { name, up } of routing.status()) this.set({ replica: name }, up ? 1 : 0);
      },
    });
  }

  routeOf(req: PipelineRequest & { route?: { path?: unknown }; baseUrl?: string }): string {
    const method = req.method === 'HEAD' ? 'GET' : req.method;
    const path = pathOf(req);
    for (const route of this.routes) if (route.method === method && route.regex.test(path)) return route.pattern;
    if (req.route?.path && typeof req.route.path === 'string') return (req.baseUrl ?? '') + req.route.path;
    return 'unmatched';
  }

  /** Counts every answered request (429s, 401s and 404s included) once the response is written. */
  stage(): Stage {
    return {
      name: 'metrics',
      answered: (req, status) =>
        this.record(
          req.method!,
          req.routePattern ?? this.routeOf(req),
          status,
          pathOf(req),
          req.startedNs,
          (req as { webhookOutcome?: string }).webhookOutcome,
          req.clickRecorded,
        ),
    };
  }

  /** Express only, in front of the provider webhooks: the receipt's outcome, for webhook_events_total. */
  webhookOutcomes(): RequestHandler {
    return (req, res, next) => {
      captureWebhookOutcome(res, (outcome) => (req.webhookOutcome = outcome));
      next();
    };
  }

  private readonly series = new Map<
    string,
    { count: Counter.Internal; duration: Histogram.Internal<'method' | 'route' | 'status'> }
  >();

  /**
   * One answered request: its count and duration by method, route pattern and status, and the
   * domain event it stands for. The labelled series are looked up once per combination.
   */
  record(
    method: string,
    route: string,
    status: number,
    path: string,
    startedNs: bigint,
    webhookOutcome?: string,
    clickRecorded?: boolean,
  ): void {
    const id = `${method} ${route} ${status}`;
    let series = this.series.get(id);
    if (!series) {
      const labels = { method, route, status: String(status) };
      series = { count: this.httpRequests.labels(labels), duration: this.httpDuration.labels(labels) };
      this.series.set(id, series);
    }
    series.count.inc();
    series.duration.observe(Number(process.hrtime.bigint() - startedNs) / 1e9);
    this.countDomainEvent(method, route, status, path, webhookOutcome, clickRecorded);
  }

  private countDomainEvent(
    method: string,
    route: string,
    status: number,
    path: string,
    webhookOutcome: string | undefined,
    clickRecorded: boolean | undefined,
  ): void {
    if (method !== 'POST') return;
    if (status === 429)
      this.rateLimited.inc({
        limit: route.startsWith('/public/')
          ? 'client_address'
          : route.startsWith('/webhooks/')
            ? 'paypal_webhook_verifications'
            : 'api_key',
      });
    const ok = status >= 200 && status < 300;
    switch (route) {
      case '/api/clicks':
        if (status === 201 && clickRecorded !== false) this.clicks.inc({ source: 'api' });
        break;
      case '/public/organizations/:organizationId/clicks':
        if (status === 201 && clickRecorded !== false) this.clicks.inc({ source: 'snippet' });
        break;
      case '/api/conversions':
        if (ok) this.conversions.inc({ outcome: status === 201 ? 'created' : 'deduped' });
        break;
      case '/api/customers':
      case '/public/organizations/:organizationId/customers':
        if (ok) this.customers.inc({ outcome: status === 201 ? 'created' : 'deduped' });
        break;
      case '/webhooks/:provider/:organizationId': {
        const provider = /^\/webhooks\/([a-z]+)\//.exec(path)?.[1] ?? 'unknown';
        const knownProvider = ['stripe', 'paddle', 'lemonsqueezy', 'polar', 'chargebee'].includes(provider)
          ? provider
          : 'unknown';
        const outcome = ok ? (webhookOutcome ?? 'processed') : status >= 500 ? 'failed' : 'rejected';
        this.webhooks.inc({ provider: knownProvider, outcome });
        break;
      }
    }
  }

  /** GET /metrics in the Prometheus text format; behind a bearer token when one is configured. */
  handler(token: string | undefined): RequestHandler {
    const expected = token ? createHash('sha256').update(token).digest() : undefined;
    return (req, res, next) => {
      if (expected) {
        const presented = (req.headers.authorization ?? '').replace(/^bearer\s+/i, '').trim();
        if (!presented || !timingSafeEqual(createHash('sha256').update(presented).digest(), expected)) {
          sendError(res, 401, 'Missing or invalid metrics token');
          return;
        }
      }
      this.registry.metrics().then((text) => {
        res.setHeader('Content-Type', this.registry.contentType);
        res.setHeader('Cache-Control', 'no-store');
        res.status(200).send(text);
      }, next);
    };
  }
}

const WEBHOOK_OUTCOMES = new Set(['processed', 'ignored', 'duplicate']);

/** The webhook receipt's `outcome`, read from the JSON the webhook handler answers with. */
function captureWebhookOutcome(res: Response, record: (outcome: string) => void): void {
  const json = res.json.bind(res);
  res.json = (body?: unknown) => {
    const outcome = (body as { data?: { webhook?: { outcome?: unknown } } } | undefined)?.data?.webhook?.outcome;
    if (typeof outcome === 'string' && WEBHOOK_OUTCOMES.has(outcome)) record(outcome);
    return json(body);
  };
}
