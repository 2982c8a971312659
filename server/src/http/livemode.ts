import type { AppRoute, AppRouter } from '@ts-rest/core';
import { isAppRoute } from '@ts-rest/core';
import { z, type ZodTypeAny } from 'zod';
import type { OrganizationContext } from './organization-context.js';

/**
 * `livemode` on every resource (shared/spec/test-mode.md), filled in one place. A request reads
 * and writes the rows of one organization (OrganizationContext.id: the test twin in test mode), so
 * every resource in its answer has the request's mode. Each route's response schemas are compiled
 * once into a function that sets `livemode` wherever the schema declares it and the route left it
 * out (a route that knows better, e.g. a public endpoint whose body names the mode, sets it
 * itself). Both lanes run the same route implementations (hot-routes.ts), so both answer the same.
 */

type Fill = (value: unknown, livemode: boolean) => unknown;

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** A function filling `livemode` in values of this schema; undefined when the schema declares none. */
export function livemodeFill(schema: ZodTypeAny): Fill | undefined {
  return compile(schema, 0);
}

function compile(schema: ZodTypeAny, depth: number): Fill | undefined {
  if (depth > 32) return undefined;
  const next = (inner: ZodTypeAny) => compile(inner, depth + 1);
  if (schema instanceof z.ZodObject) {
    const shape = schema.shape as Record<string, ZodTypeAny>;
    const declares = 'livemode' in shape;
    const fields = Object.entries(shape).flatMap(([key, field]) => {
      const fill = key === 'livemode' ? undefined : next(field);
      return fill ? [[key, fill] as const] : [];
    });
    if (!declares && fields.length === 0) return undefined;
    return (value, livemode) => {
      if (!isObject(value)) return value;
      const out: Record<string, unknown> = { ...value };
      for (const [key, fill] of fields) if (out[key] !== undefined) out[key] = fill(out[key], livemode);
      if (declares && out.livemode === undefined) out.livemode = livemode;
      return out;
    };
  }
  if (schema instanceof z.ZodArray) {
    const fill = next(schema.element as ZodTypeAny);
    return fill && ((value, livemode) => (Array.isArray(value) ? value.map((item) => fill(item, livemode)) : value));
  }
  if (schema instanceof z.ZodRecord) {
    const fill = next(schema.valueSchema as ZodTypeAny);
    return (
      fill &&
      ((value, livemode) =>
        isObject(value) ? Object.fromEntries(Object.entries(value).map(([k, v]) => [k, fill(v, livemode)])) : value)
    );
  }
  if (schema instanceof z.ZodOptional || schema instanceof z.ZodNullable) return next(schema.unwrap() as ZodTypeAny);
  if (schema instanceof z.ZodDefault) return next(schema._def.innerType as ZodTypeAny);
  if (schema instanceof z.ZodEffects) return next(schema.innerType() as ZodTypeAny);
  if (schema instanceof z.ZodIntersection) {
    const left = next(schema._def.left as ZodTypeAny);
    const right = next(schema._def.right as ZodTypeAny);
    if (!left && !right) return undefined;
    return (value, livemode) =>
      right ? right(left ? left(value, livemode) : value, livemode) : left!(value, livemode);
  }
  if (schema instanceof z.ZodUnion || schema instanceof z.ZodDiscriminatedUnion) {
    // The variant a value is: the first object variant whose fields include all of the value's.
    const variants = (schema.options as ZodTypeAny[]).map((option) => ({
      keys: objectKeys(option),
      fill: next(option),
    }));
    if (variants.every((v) => !v.fill)) return undefined;
    return (value, livemode) => {
      if (!isObject(value)) return value;
      const variant = variants.find(
        (v) => v.keys === undefined || Object.keys(value).every((k) => k === 'livemode' || v.keys!.has(k)),
      );
      return variant?.fill ? variant.fill(value, livemode) : value;
    };
  }
  return undefined;
}

function objectKeys(schema: ZodTypeAny): Set<string> | undefined {
  let inner = schema;
  while (inner instanceof z.ZodOptional || inner instanceof z.ZodNullable || inner instanceof z.ZodEffects)
    inner = (inner instanceof z.ZodEffects ? inner.innerType() : inner.unwrap()) as ZodTypeAny;
  return inner instanceof z.ZodObject ? new Set(Object.keys(inner.shape as object)) : undefined;
}

/** The request's mode: its organization's (API key, dashboard session), else what a route group set (`livemode`). */
export function livemodeOfRequest(req: {
  organization?: OrganizationContext;
  livemode?: boolean;
}): boolean | undefined {
  return req.organization?.livemode ?? req.livemode;
}

declare global {
  // eslint-disable-next-line @typescript-eslint/no-namespace -- Express's types declare Request in the global namespace Express: adding a field is merging into it
  namespace Express {
    interface Request {
      /** The mode of a request without an organization context (the public endpoints' `mode`, a partner's session). */
      livemode?: boolean;
    }
  }
}

type Implementation = (input: { req: unknown }) => Promise<{ status: number; body: unknown }>;

function fillRoute(route: AppRoute, implementation: Implementation): Implementation {
  const fills = new Map<number, Fill>();
  for (const [status, schema] of Object.entries(route.responses)) {
    if (schema instanceof z.ZodType) {
      const fill = livemodeFill(schema);
      if (fill) fills.set(Number(status), fill);
    }
  }
  if (fills.size === 0) return implementation;
  return async (input) => {
    const result = await implementation(input);
    const fill = fills.get(result.status);
    const livemode = livemodeOfRequest(input.req as { organization?: OrganizationContext; livemode?: boolean });
    return fill && livemode !== undefined ? { ...result, body: fill(result.body, livemode) } : result;
  };
}

/** The router's implementations, each filling `livemode` in its answers (the one server instance's router(), router-types.ts). */
export function withLivemode<T>(contract: AppRouter, router: T): T {
  const out: Record<string, unknown> = {};
  for (const [name, entry] of Object.entries(router as Record<string, unknown>)) {
    const route = (contract as Record<string, AppRoute | AppRouter | undefined>)[name];
    if (route && isAppRoute(route)) {
      if (typeof entry === 'function') out[name] = fillRoute(route, entry as Implementation);
      else {
        const options = entry as { handler: Implementation };
        out[name] = { ...options, handler: fillRoute(route, options.handler) };
      }
    } else out[name] = route && typeof entry === 'object' ? withLivemode(route, entry) : entry;
  }
  return out as T;
}
