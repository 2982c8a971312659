import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { hash as argon2Hash, verify as argon2Verify } from '@node-rs/argon2';
import { betterAuth } from 'better-auth';
import { magicLink } from 'better-auth/plugins/magic-link';
import type { Kysely } from 'kysely';
import type { Logger } from 'pino';
import type { Mailer } from './mailer.js';

/**
 * Sign-in (password or e-mailed link), sessions, password reset and sign-out everywhere: better-auth (the library RefRef
 * uses), on our PostgreSQL through MikroORM's own kysely (so the embedded database's single
 * connection is shared, and sessions live in the `sessions` table every instance reads). Its
 * endpoints are served under /auth (app.ts); it owns no schema: our migration creates its tables
 * (the baseline migration, baseline/tenancy.ts) and the maps below name their snake_case columns.
 *
 * What we do not take from it: public sign-up (users only come from invitations, people.service.ts),
 * its rate limiter (it keys on client-sent forwarding headers; ours, http/rate-limit.ts, honours
 * TRUST_PROXY and shares one budget across instances), and its organization plugin (organizations
 * are ours, created by the operator; a user belongs to one).
 */
export const AUTH_BASE_PATH = '/auth';
/** Cookie names start with this (`svc.session_token`, or `__Secure-svc.session_token` over HTTPS). */
export const AUTH_COOKIE_PREFIX = 'svc';
export const SESSION_DAYS = 7;

/** @node-rs/argon2's Algorithm.Argon2id (a const enum, which isolatedModules cannot read). */
const ARGON2ID = 2;

/** argon2id at OWASP's recommended minimum (19 MiB, 2 iterations, 1 lane; also the library's defaults). */
export const hashPassword = (password: string): Promise<string> =>
  argon2Hash(password, { algorithm: ARGON2ID, memoryCost: 19_456, timeCost: 2, parallelism: 1 });
export const verifyPassword = ({ hash, password }: { hash: string; password: string }): Promise<boolean> =>
  argon2Verify(hash, password).catch(() => false);

export interface AuthOptions {
  kysely: Kysely<never>;
  /**
   * PUBLIC_BASE_URL: the base of every link better-auth and we e-mail (never the request's Host or
   * X-Forwarded-Proto), the one origin callback URLs may name; cookies are Secure when it is https.
   */
  publicBaseUrl: string;
  /** AUTH_SECRET, else derived from ADMIN_TOKEN, else random (sessions end with the process). */
  secret: string;
  mailer: Mailer;
  logger: Logger;
}

/**
 * The key that signs session cookies: the same on every instance and across restarts. AUTH_SECRET
 * when set; else derived from ADMIN_TOKEN (one secret fewer to manage for the operator who must set
 * that one anyway to invite the first owner); else random per process, with a warning.
 */
export function authSecret(config: { AUTH_SECRET?: string; ADMIN_TOKEN?: string }, logger: Logger): string {
  if (config.AUTH_SECRET) return config.AUTH_SECRET;
  if (config.ADMIN_TOKEN)
    return createHash('sha256').update(`dashboard-sessions:${config.ADMIN_TOKEN}`).digest('base64url');
  logger.warn('neither AUTH_SECRET nor ADMIN_TOKEN is set: dashboard sessions end when this process stops');
  return randomBytes(32).toString('base64url');
}

export function createAuth(options: AuthOptions) {
  const secure = options.publicBaseUrl.startsWith('https:');
  const publicOrigin = new URL(options.publicBaseUrl).origin;
  return betterAuth({
    appName: 'Affiliate Attribution',
    basePath: AUTH_BASE_PATH,
    baseURL: options.publicBaseUrl,
    secret: options.secret,
    database: { db: options.kysely, type: 'postgres' },
    // The public origin only, never one derived from the request: better-auth checks both the
    // Origin of a request with cookies (CSRF; our own check in people.module.ts runs first) and
    // the callbackURL / redirectTo it will send the browser to after an e-mailed link against
    // this list, and a Host header chosen by whoever asks for the link must not make evil.example
    // a trusted destination.
    trustedOrigins: [publicOrigin, ...loopbackAliases(publicOrigin)],
    emailAndPassword: {
      enabled: true,
      disableSignUp: true,
      minPasswordLength: 10,
      password: { hash: hashPassword, verify: verifyPassword },
      revokeSessionsOnPasswordReset: true,
      sendResetPassword: async ({ user, token }) => {
        const base = options.publicBaseUrl;
        await options.mailer.send({
          to: user.email,
          subject: 'Reset your dashboard password',
          text: `Set a new password: ${base}/dashboard/reset-password?token=${encodeURIComponent(token)}\nThe link is valid for one hour.`,
        });
      },
    },
    session: {
      modelName: 'sessions',
      expiresIn: SESSION_DAYS * 24 * 60 * 60,
      updateAge: 24 * 60 * 60,
      fields: {
        expiresAt: 'expires_at',
        createdAt: 'created_at',
        updatedAt: 'updated_at',
        ipAddress: 'ip_address',
        userAgent: 'user_agent',
        userId: 'user_id',
      },
    },
    user: {
      modelName: 'users',
      fields: { emailVerified: 'email_verified', createdAt: 'created_at', updatedAt: 'updated_at' },
      additionalFields: {
        organizationId: { type: 'string', fieldName: 'organization_id', required: true, input: false },
        role: { type: 'string', required: true, input: false },
      },
      changeEmail: { enabled: false },
    },
    account: {
      modelName: 'accounts',
      fields: {
        accountId: 'account_id',
        providerId: 'provider_id',
        userId: 'user_id',
        accessToken: 'access_token',
        refreshToken: 'refresh_token',
        idToken: 'id_token',
        accessTokenExpiresAt: 'access_token_expires_at',
        refreshTokenExpiresAt: 'refresh_token_expires_at',
        createdAt: 'created_at',
        updatedAt: 'updated_at',
      },
    },
    verification: {
      modelName: 'verifications',
      fields: { expiresAt: 'expires_at', createdAt: 'created_at', updatedAt: 'updated_at' },
      // Every verification value's identifier (`reset-password:<token>` for a password reset) is
      // stored as its SHA-256 (base64url), like every other one-time token of the service: whoever
      // reads the table cannot reset a password with what is there. Rows written in clear before
      // are hashed by Migration20270115000000_hashed_verifications.
      storeIdentifier: 'hashed',
    },
    plugins: [
      // Sign-in by an e-mailed one-time link, for users that exist (no sign-up through it): valid
      // 15 minutes, once, stored hashed.
      magicLink({
        disableSignUp: true,
        expiresIn: 15 * 60,
        storeToken: 'hashed',
        sendMagicLink: async ({ email, url }) => {
          await options.mailer.send({
            to: email,
            subject: 'Your dashboard sign-in link',
            text: `Sign in (the link works once, for 15 minutes): ${url}`,
          });
        },
      }),
    ],
    rateLimit: { enabled: false },
    telemetry: { enabled: false },
    logger: {
      log: (level, message, ...args) => options.logger[level]({ args }, `auth: ${message}`),
    },
    advanced: {
      cookiePrefix: AUTH_COOKIE_PREFIX,
      useSecureCookies: secure,
      // Stated, because better-auth turns these checks off by itself when NODE_ENV=test: the tests
      // then see what production does (Origin of signed-in requests, callback URLs).
      disableOriginCheck: false,
      defaultCookieAttributes: { httpOnly: true, sameSite: 'lax', secure, path: '/' },
      database: { generateId: () => randomUUID() },
    },
  });
}

export type Auth = ReturnType<typeof createAuth>;

/**
 * A base on `localhost` (the default, config.ts) is the same service under 127.0.0.1 and [::1]:
 * someone trying it out may open either, and sign out or change their password from there.
 */
export function loopbackAliases(origin: string): string[] {
  const url = new URL(origin);
  if (url.hostname !== 'localhost') return [];
  const port = url.port ? `:${url.port}` : '';
  return [`${url.protocol}//127.0.0.1${port}`, `${url.protocol}//[::1]${port}`];
}
