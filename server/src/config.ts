import { z } from 'zod';
import { PROGRAM_RULE_TTL_MS } from './attribution/cache.js';
import { parseEncryptionKey } from './security/secret-box.js';
import { databaseUrlProblem } from './db/database-url.js';

/** Per client address and public endpoint (snippet clicks, snippet customers). */
export const PUBLIC_RATE_LIMIT_DEFAULTS = { max: 120, windowSeconds: 60 } as const;

/** Per client address, every way to try a dashboard password or token (sign-in, password reset, invitations). */
export const SIGN_IN_RATE_LIMIT_DEFAULTS = { max: 5, windowSeconds: 60 } as const;

/** Per partner e-mail (and organization), requests for a portal sign-in link. */
export const SIGN_IN_LINKS_PER_EMAIL_DEFAULTS = { max: 3, windowSeconds: 900 } as const;

/**
 * Per organization, calls to PayPal's verify-webhook-signature for its PayPal webhooks (what passes
 * the checks that need no call, webhooks/paypal-transmission.ts): forged webhooks cannot spend more
 * of the merchant's PayPal rate limit than this. PayPal sends one event per payout item; events past
 * it are answered 429, PayPal delivers them again, and the reconciliation settles payouts anyway.
 */
export const PAYPAL_WEBHOOK_VERIFICATION_DEFAULTS = { max: 120, windowSeconds: 60 } as const;

/** Per API key, across every /api route: generous, it guards the service against one runaway client. */
export const API_RATE_LIMIT_DEFAULTS = { max: 1_200_000, windowSeconds: 60 } as const;

/**
 * How long an instance told to stop keeps serving with /ready at 503 before it closes its listener:
 * enough for a load balancer checking /ready every second, down after 2 failures (the haproxy
 * recipes of deploy/ and docs/operations.md), with room for a check in flight; see docs/operations.md.
 */
export const SHUTDOWN_DRAIN_DELAY_DEFAULT_MS = 5_000;

/**
 * Bounds on every wait for PostgreSQL, so that a database that stops answering (frozen, partitioned,
 * overloaded) turns into 503 + Retry-After within seconds instead of requests that hang for as long
 * as it does. Each is longer than any statement the service sends in normal operation (its
 * statements take milliseconds; migrations run without the statement bounds, see db/orm.ts).
 */
export const DATABASE_TIMEOUT_DEFAULTS = {
  statementMs: 5_000,
  /** How much longer than the statement timeout the service waits for an answer (the cancel's round trip). */
  answerGraceMs: 1_000,
  acquireMs: 5_000,
  connectMs: 3_000,
} as const;

/** A PostgreSQL URL, checked as the drivers will read it (db/database-url.ts), so that a misencoded password stops the start naming the setting. */
const checkPostgresUrl = (value: string, ctx: z.RefinementCtx): void => {
  const problem = databaseUrlProblem(value);
  if (problem) ctx.addIssue({ code: z.ZodIssueCode.custom, message: problem });
};

/**
 * The only reader of process.env. Every setting is documented in the README's configuration table.
 */
const EnvSchema = z
  .object({
    PORT: z.coerce.number().int().min(0).max(65535).default(3000),
    HOST: z.string().default('0.0.0.0'),
    DATABASE_URL: z.string().superRefine(checkPostgresUrl).optional(),
    DATA_DIR: z.string().default('.data'),
    ADMIN_TOKEN: z.string().min(16, 'ADMIN_TOKEN must be at least 16 characters').optional(),
    LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
    DB_POOL_MAX: z.coerce.number().int().min(1).max(200).default(10),
    /** Safety nets of the caches: changes reach every instance by notification (db/change-notifications.ts). */
    API_KEY_CACHE_TTL_MS: z.coerce.number().int().min(0).max(60_000).default(5_000),
    PROGRAM_RULE_CACHE_TTL_MS: z.coerce.number().int().min(0).max(60_000).default(PROGRAM_RULE_TTL_MS),
    /**
     * The connection for what needs session state (LISTEN for cache changes): behind PgBouncer in
     * transaction mode, PostgreSQL directly or a session-mode pool. Default DATABASE_URL.
     */
    DATABASE_DIRECT_URL: z.string().superRefine(checkPostgresUrl).optional(),
    /** The former name of DATABASE_DIRECT_URL, still read. */
    DATABASE_LISTEN_URL: z.string().superRefine(checkPostgresUrl).optional(),
    /**
     * Read replicas (comma-separated URLs) for the reads that tolerate lag (lists and reports: the
     * routes of REPLICA_READS, db/replica-reads.ts); every other read and every write stays on
     * DATABASE_URL, and so do those reads while no replica answers.
     */
    DATABASE_REPLICA_URLS: z
      .string()
      .optional()
      .transform((v) =>
        (v ?? '')
          .split(',')
          .map((u) => u.trim())
          .filter(Boolean),
      )
      .pipe(z.array(z.string().superRefine(checkPostgresUrl))),
    SHUTDOWN_TIMEOUT_MS: z.coerce.number().int().min(0).default(10_000),
    TRUST_PROXY: z
      .string()
      .default('false')
      .transform((v): boolean | number | string =>
        v === 'true' ? true : v === 'false' ? false : /^\d+$/.test(v) ? Number(v) : v,
      ),
    PUBLIC_RATE_LIMIT_MAX: z.coerce.number().int().min(0).default(PUBLIC_RATE_LIMIT_DEFAULTS.max),
    PUBLIC_RATE_LIMIT_WINDOW_SECONDS: z.coerce
      .number()
      .int()
      .min(1)
      .max(86_400)
      .default(PUBLIC_RATE_LIMIT_DEFAULTS.windowSeconds),
    /** Per API key, on every /api route. 0 disables. */
    API_RATE_LIMIT_MAX: z.coerce.number().int().min(0).default(API_RATE_LIMIT_DEFAULTS.max),
    API_RATE_LIMIT_WINDOW_SECONDS: z.coerce
      .number()
      .int()
      .min(1)
      .max(86_400)
      .default(API_RATE_LIMIT_DEFAULTS.windowSeconds),
    /** Set: rate limits are counted in this Redis, shared by every instance. Unset: per instance, in memory. */
    REDIS_URL: z.string().url().optional(),
    /** Set: GET /metrics requires `Authorization: Bearer <METRICS_TOKEN>`. */
    METRICS_TOKEN: z.string().min(16, 'METRICS_TOKEN must be at least 16 characters').optional(),
    /**
     * On SIGTERM, /ready answers 503 for this long before the listener closes (load balancer
     * deregistration): longer than a balancer's health-check interval x failures to mark it down.
     */
    SHUTDOWN_DRAIN_DELAY_MS: z.coerce.number().int().min(0).max(300_000).default(SHUTDOWN_DRAIN_DELAY_DEFAULT_MS),
    /**
     * Where people reach the service: the base of every link it hands out (invitations, password
     * resets, sign-in links, `servers` of GET /openapi.json), never a request's Host or
     * X-Forwarded-* headers. Unset: publicBaseUrlDefault (this machine), logged at start.
     */
    PUBLIC_BASE_URL: z
      .string()
      .url()
      .refine(
        (v) => /^https?:\/\/[^/?#]+\/?$/i.test(v),
        'must be an http:// or https:// origin without a path, e.g. https://affiliates.example.com',
      )
      .transform((v) => v.replace(/\/+$/, ''))
      .optional(),
    LEGACY_BASE_URL: z.string().url().optional(),
    /** PostgreSQL cancels a statement running longer (the `statement_timeout` start-up parameter); 0: not sent. */
    DB_STATEMENT_TIMEOUT_MS: z.coerce
      .number()
      .int()
      .min(0)
      .max(3_600_000)
      .default(DATABASE_TIMEOUT_DEFAULTS.statementMs),
    /** The service stops waiting for a statement's answer and discards its connection; default: the statement timeout + 1 s. */
    DB_QUERY_TIMEOUT_MS: z.coerce.number().int().min(100).max(3_600_000).optional(),
    /** Longest wait for a pooled connection, opening one included. */
    DB_ACQUIRE_TIMEOUT_MS: z.coerce.number().int().min(100).max(600_000).default(DATABASE_TIMEOUT_DEFAULTS.acquireMs),
    /** Longest wait to open one connection (TCP, TLS, authentication). */
    DB_CONNECT_TIMEOUT_MS: z.coerce.number().int().min(100).max(600_000).default(DATABASE_TIMEOUT_DEFAULTS.connectMs),
    /** 32 bytes (64 hex or 44 base64 characters): secrets the service keeps are encrypted with it (security/secret-box.ts). */
    ENCRYPTION_KEY: z
      .string()
      .refine((v) => parseEncryptionKey(v) !== undefined, 'must be 32 bytes: 64 hex characters or 44 base64 characters')
      .optional(),
    /** Outbound webhooks may target http:// and private addresses: development and tests only. */
    WEBHOOK_ALLOW_PRIVATE_URLS: z
      .enum(['true', 'false'])
      .default('false')
      .transform((v) => v === 'true'),
    /** `in-process`: this process delivers outbound events; `off`: another process does (`npm run worker`). */
    WEBHOOK_DELIVERY: z.enum(['in-process', 'off']).default('in-process'),
    /** Outbound events and their finished deliveries are deleted this many days after dispatch; 0 keeps them. */
    WEBHOOK_RETENTION_DAYS: z.coerce.number().int().min(0).max(3650).default(30),
    /** Signs dashboard session cookies; default: derived from ADMIN_TOKEN (modules/people/auth.ts). */
    AUTH_SECRET: z.string().min(32, 'AUTH_SECRET must be at least 32 characters').optional(),
    /** Dashboard sign-in attempts per client address and window; 0 disables. */
    SIGN_IN_RATE_LIMIT_MAX: z.coerce.number().int().min(0).default(SIGN_IN_RATE_LIMIT_DEFAULTS.max),
    SIGN_IN_RATE_LIMIT_WINDOW_SECONDS: z.coerce
      .number()
      .int()
      .min(1)
      .max(86_400)
      .default(SIGN_IN_RATE_LIMIT_DEFAULTS.windowSeconds),
    /** Partner portal sign-in links e-mailed per address and window; 0 disables. */
    SIGN_IN_LINKS_PER_EMAIL_MAX: z.coerce.number().int().min(0).default(SIGN_IN_LINKS_PER_EMAIL_DEFAULTS.max),
    SIGN_IN_LINKS_PER_EMAIL_WINDOW_SECONDS: z.coerce
      .number()
      .int()
      .min(1)
      .max(86_400)
      .default(SIGN_IN_LINKS_PER_EMAIL_DEFAULTS.windowSeconds),
    /** Set: e-mails go out through this SMTP server (nodemailer); unset: they are written to the log. */
    SMTP_URL: z
      .string()
      .url()
      .refine((v) => /^smtps?:\/\//.test(v), 'must be smtp:// or smtps://')
      .optional(),
    MAIL_FROM: z.string().min(3).optional(),
  })
  .superRefine((env, ctx) => {
    // The embedded database (DATABASE_URL unset) accepts one connection: nothing to listen on.
    for (const name of ['DATABASE_DIRECT_URL', 'DATABASE_LISTEN_URL'] as const) {
      if (env[name] !== undefined && env.DATABASE_URL === undefined) {
        ctx.addIssue({
          code: z.ZodIssueCode.custom,
          path: [name],
          message: 'requires DATABASE_URL (the embedded database has no listener)',
        });
      }
    }
    if (
      env.DATABASE_DIRECT_URL !== undefined &&
      env.DATABASE_LISTEN_URL !== undefined &&
      env.DATABASE_DIRECT_URL !== env.DATABASE_LISTEN_URL
    ) {
      ctx.addIssue({
        code: z.ZodIssueCode.custom,
        path: ['DATABASE_LISTEN_URL'],
        message: 'is the former name of DATABASE_DIRECT_URL, which is set to another URL: set only DATABASE_DIRECT_URL',
      });
    }
    // Links in e-mails come from PUBLIC_BASE_URL alone. Its default names this machine, which
    // suits trying the service; real e-mail goes to people elsewhere, and port 0 is not known yet.
    if (env.PUBLIC_BASE_URL === undefined && env.SMTP_URL !== undefined) {
      ctx.addIssue({
        code: z.ZodIssueCode.custom,
        path: ['PUBLIC_BASE_URL'],
        message:
          'required with SMTP_URL: the links in e-mails (invitations, password resets, sign-in links) are built from it',
      });
    }
    if (env.PUBLIC_BASE_URL === undefined && env.PORT === 0) {
      ctx.addIssue({
        code: z.ZodIssueCode.custom,
        path: ['PUBLIC_BASE_URL'],
        message:
          'required with PORT=0: the links the service hands out are built from it, and the port is not known before start',
      });
    }
    if (env.DATABASE_REPLICA_URLS.length > 0 && env.DATABASE_URL === undefined) {
      ctx.addIssue({
        code: z.ZodIssueCode.custom,
        path: ['DATABASE_REPLICA_URLS'],
        message: 'requires DATABASE_URL (the embedded database has no replicas)',
      });
    }
    // A client that gives up first would discard the connection of a statement PostgreSQL was about
    // to cancel cleanly, and report a slow statement as an unreachable database.
    if (
      env.DB_QUERY_TIMEOUT_MS !== undefined &&
      env.DB_STATEMENT_TIMEOUT_MS > 0 &&
      env.DB_QUERY_TIMEOUT_MS <= env.DB_STATEMENT_TIMEOUT_MS
    ) {
      ctx.addIssue({
        code: z.ZodIssueCode.custom,
        path: ['DB_QUERY_TIMEOUT_MS'],
        message: 'must be longer than DB_STATEMENT_TIMEOUT_MS',
      });
    }
  })
  .transform((env) => ({
    ...env,
    PUBLIC_BASE_URL: env.PUBLIC_BASE_URL ?? publicBaseUrlDefault(env),
    /** True when PUBLIC_BASE_URL was not set (main.ts says so at start). */
    publicBaseUrlDerived: env.PUBLIC_BASE_URL === undefined,
    DATABASE_DIRECT_URL: env.DATABASE_DIRECT_URL ?? env.DATABASE_LISTEN_URL ?? env.DATABASE_URL,
    DB_QUERY_TIMEOUT_MS:
      env.DB_QUERY_TIMEOUT_MS ??
      (env.DB_STATEMENT_TIMEOUT_MS || DATABASE_TIMEOUT_DEFAULTS.statementMs) + DATABASE_TIMEOUT_DEFAULTS.answerGraceMs,
  }));

/**
 * Where each platform an import reads from is reached (modules/imports): the base its API paths
 * are appended to. Tests point them at local servers that speak the platform's documented API.
 */
export const IMPORT_BASE_URL_DEFAULTS = {
  rewardful: 'https://api.getrewardful.com/v1',
  tolt: 'https://api.tolt.com/v1',
  firstpromoter: 'https://api.firstpromoter.com/api/v2',
  partnerstack: 'https://api.partnerstack.com/api/v2',
  tapfiliate: 'https://api.tapfiliate.com/1.6',
} as const;

const ImportBaseUrlsSchema = z.object({
  IMPORT_REWARDFUL_API_BASE_URL: z.string().url().default(IMPORT_BASE_URL_DEFAULTS.rewardful),
  IMPORT_TOLT_API_BASE_URL: z.string().url().default(IMPORT_BASE_URL_DEFAULTS.tolt),
  IMPORT_FIRSTPROMOTER_API_BASE_URL: z.string().url().default(IMPORT_BASE_URL_DEFAULTS.firstpromoter),
  IMPORT_PARTNERSTACK_API_BASE_URL: z.string().url().default(IMPORT_BASE_URL_DEFAULTS.partnerstack),
  IMPORT_TAPFILIATE_API_BASE_URL: z.string().url().default(IMPORT_BASE_URL_DEFAULTS.tapfiliate),
});

/**
 * IMPORT_<SOURCE>_API_BASE_URL, read when an import starts (not only at boot), so a service built
 * by createApp without a loaded Config (tests) still honours them. An invalid URL throws.
 */
export function importBaseUrls(
  env: NodeJS.ProcessEnv = process.env,
): Record<keyof typeof IMPORT_BASE_URL_DEFAULTS, string> {
  const cleaned = Object.fromEntries(Object.entries(env).filter(([k, v]) => k.startsWith('IMPORT_') && v !== ''));
  const parsed = ImportBaseUrlsSchema.safeParse(cleaned);
  if (!parsed.success)
    throw new Error(
      `Invalid configuration: ${parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`,
    );
  const u = parsed.data;
  return {
    rewardful: u.IMPORT_REWARDFUL_API_BASE_URL,
    tolt: u.IMPORT_TOLT_API_BASE_URL,
    firstpromoter: u.IMPORT_FIRSTPROMOTER_API_BASE_URL,
    partnerstack: u.IMPORT_PARTNERSTACK_API_BASE_URL,
    tapfiliate: u.IMPORT_TAPFILIATE_API_BASE_URL,
  };
}

/**
 * Where each payout rail's API is reached (modules/payouts/rails). Unset: the provider's own host
 * for the integration's `environment` (PAYOUT_RAIL_HOSTS). Set: that base, whatever the
 * environment (tests point them at local servers that speak the provider's documented API).
 */
export const PAYOUT_RAIL_HOSTS = {
  paypal: { sandbox: 'https://api-m.sandbox.paypal.com', live: 'https://api-m.paypal.com' },
  stripe: { sandbox: 'https://api.stripe.com', live: 'https://api.stripe.com' },
  wise: { sandbox: 'https://api.sandbox.transferwise.tech', live: 'https://api.wise.com' },
} as const;

const PayoutRailSettingsSchema = z.object({
  PAYPAL_API_BASE_URL: z.string().url().optional(),
  STRIPE_API_BASE_URL: z.string().url().optional(),
  WISE_API_BASE_URL: z.string().url().optional(),
  /** Wise signs its webhooks with RSA-SHA256 (X-Signature-SHA256): the public key Wise publishes for the environment (PEM, docs.wise.com, "Webhooks: event handling"). Unset: Wise webhooks answer 400 and outcomes come from the reconciliation. */
  WISE_WEBHOOK_PUBLIC_KEY: z.string().min(1).optional(),
  /** How often payouts in flight are asked about (their provider's outcome recorded within about this long, also without a webhook). */
  PAYOUT_RECONCILE_INTERVAL_SECONDS: z.coerce.number().int().min(1).max(3600).default(30),
});

export type PayoutRailSettings = z.output<typeof PayoutRailSettingsSchema>;

/** The payout rails' settings, read when a payout is sent or reconciled (not only at boot), like importBaseUrls. An invalid value throws. */
export function payoutRailSettings(env: NodeJS.ProcessEnv = process.env): PayoutRailSettings {
  const cleaned = Object.fromEntries(
    Object.entries(env).filter(([k, v]) => v !== '' && k in PayoutRailSettingsSchema.shape),
  );
  const parsed = PayoutRailSettingsSchema.safeParse(cleaned);
  if (!parsed.success)
    throw new Error(
      `Invalid configuration: ${parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`,
    );
  return parsed.data;
}

export type Config = z.output<typeof EnvSchema>;

/**
 * PUBLIC_BASE_URL when it is not set: this machine, at the configured port (`npm start`'s
 * http://localhost:3000), from the configuration alone, so that a request's Host cannot choose it.
 */
export function publicBaseUrlDefault(env: { HOST: string; PORT: number }): string {
  const anyInterface = ['0.0.0.0', '::', '127.0.0.1', '::1', 'localhost'].includes(env.HOST);
  const host = anyInterface ? 'localhost' : env.HOST.includes(':') ? `[${env.HOST}]` : env.HOST;
  return `http://${host}:${env.PORT}`;
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const cleaned = Object.fromEntries(Object.entries(env).filter(([, v]) => v !== ''));
  const parsed = EnvSchema.safeParse(cleaned);
  // Checked at boot too, so a mistyped base URL stops the service instead of failing imports later.
  importBaseUrls(env);
  payoutRailSettings(env);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ');
    throw new Error(`Invalid configuration: ${problems}`);
  }
  return parsed.data;
}
