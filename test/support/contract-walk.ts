import type { AppRoute } from '@ts-rest/core';
import type { ZodTypeAny } from 'zod';

/*
 * What the tests that walk every contract route (test/reliability/cross-organization.test.ts,
 * test/api/test-mode-every-route.test.ts) share: a minimal valid body from the route's zod schema,
 * one body per reference it can carry, and which of an organization's ids each resource's `:id`
 * takes. Each test keeps its own rule of what the answers must be.
 */

/** A zod schema's internal definition (typeName, shape, checks…), read the same way by every walker. */
export function def(schema: ZodTypeAny): any {
  return (schema as unknown as { _def: any })._def;
}

/**
 * A minimal valid value of the schema (required fields only), with `fields` set where the schema
 * has them; free strings start with `prefix` (who sent them shows in a failure).
 */
export function sample(schema: ZodTypeAny, fields: Record<string, unknown>, prefix: string): unknown {
  const d = def(schema);
  switch (d.typeName) {
    case 'ZodObject': {
      const out: Record<string, unknown> = {};
      for (const [key, field] of Object.entries(d.shape() as Record<string, ZodTypeAny>)) {
        if (key in fields) out[key] = fields[key];
        else if (!field.isOptional()) out[key] = sample(field, fields, prefix);
      }
      return out;
    }
    case 'ZodString': {
      const kinds = new Set((d.checks ?? []).map((c: { kind: string }) => c.kind));
      if (kinds.has('uuid')) return '00000000-0000-4000-8000-000000000000';
      if (kinds.has('email')) return `${prefix}-${Date.now()}@example.com`;
      if (kinds.has('regex')) return 'USD';
      return `${prefix}-${Math.random().toString(36).slice(2, 10)}`;
    }
    case 'ZodNumber':
      return 10;
    case 'ZodBoolean':
      return true;
    case 'ZodEnum':
      return d.values[0];
    case 'ZodLiteral':
      return d.value;
    case 'ZodOptional':
    case 'ZodNullable':
    case 'ZodDefault':
      return sample(d.innerType, fields, prefix);
    case 'ZodEffects':
      return sample(d.schema, fields, prefix);
    case 'ZodRecord':
      // A provider's event (the /webhooks routes): a Stripe-like event carrying the fields as metadata.
      return { type: 'checkout.session.completed', metadata: fields };
    default:
      return undefined;
  }
}

/** One body to send: `reference` names the body field set to the other party's identifier, if any. */
export interface BodyVariant {
  body: unknown;
  reference?: string;
}

/**
 * The bodies to send to a route: none for a GET or a route without a zod body; else one body per
 * field of `references` the body has (that field set to its value, the rest sampled), or one
 * sampled body (with `fallback` set where the schema has those fields) when it has none.
 */
export function bodyVariants(
  route: AppRoute,
  references: Record<string, string>,
  options: { prefix: string; fallback?: Record<string, unknown> },
): BodyVariant[] {
  if (
    route.method === 'GET' ||
    !('body' in route) ||
    !route.body ||
    typeof (route.body as { _def?: unknown })._def !== 'object'
  )
    return [{ body: undefined }];
  const schema = route.body as ZodTypeAny;
  const shape = def(schema).typeName === 'ZodObject' ? (def(schema).shape() as Record<string, unknown>) : {};
  const present = Object.keys(references).filter((key) => key in shape);
  if (present.length === 0) return [{ body: sample(schema, options.fallback ?? {}, options.prefix) }];
  return present.map((key) => ({ body: sample(schema, { [key]: references[key] }, options.prefix), reference: key }));
}

/** An organization's ids, one of each kind a route's `:id` takes. */
export interface ResourceIds {
  program: string;
  affiliate: string;
  customer: { id: string; customer_id: string };
  conversion: { id: string; external_id: string };
  commission: string;
  payout: string;
  coupon: string;
  import: string;
  webhookEndpoint: string;
  webhookDelivery: string;
}

/**
 * The ids a route of `resource` (the first part of its contract name) takes as `:id`, every form
 * it accepts; undefined for a resource not listed here (the caller knows it, or says to add it).
 */
export function idsForResource(resource: string, path: string, ids: ResourceIds): string[] | undefined {
  switch (resource) {
    case 'programs':
      return [ids.program];
    case 'affiliates':
    case 'partnerInvitations':
    case 'portalPreview':
    case 'taxForms':
    case 'taxFormReview':
    case 'stripeOnboarding':
      return [ids.affiliate];
    case 'customers':
      return [ids.customer.id, ids.customer.customer_id];
    case 'conversions':
      return [ids.conversion.id, ids.conversion.external_id];
    case 'commissions':
      return [ids.commission];
    case 'payouts':
      return [ids.payout];
    case 'coupons':
      return [ids.coupon];
    case 'imports':
      return [ids.import];
    case 'webhookEndpoints':
      return path.startsWith('/api/webhook-deliveries/') ? [ids.webhookDelivery] : [ids.webhookEndpoint];
  }
  return undefined;
}
