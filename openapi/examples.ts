import type { ReferenceObject, SchemaObject } from 'openapi3-ts/oas30';

/**
 * Realistic examples, derived from each schema and the names of its fields, so that a field
 * added to the contract gets an example without anyone writing one by hand. One set of ids is
 * used throughout, so the examples of different operations tell one consistent story (the
 * customer of one example is the customer of the next). Every example is validated against its
 * schema when the document is built (document.ts), so an example can never contradict the schema.
 */

/** The ids of one organization's records, shared by every example. */
export const EXAMPLE_IDS: Record<string, string> = {
  organization: '3f2b8c1e-7d4a-4e9b-8a61-2c5d9f0e4b7a',
  program: '9b1d4e2f-5a6c-4d8e-b3f7-0a2c4e6f8b1d',
  affiliate: '6e8a0c2d-4f6b-4a8d-9c1e-3b5d7f9a1c3e',
  click: 'c4e6a8b0-2d4f-4b6a-8d0c-5e7a9b1d3f5a',
  customer: '1a3c5e7b-9d2f-4e6a-b8c0-7d9f1b3e5a7c',
  conversion: '8d0f2b4a-6c8e-4a1d-9f3b-5c7e9a1b3d5f',
  api_key: '5c7e9a1b-3d5f-4b7a-8c9e-1f3a5c7e9b2d',
  integration: '2e4a6c8b-0d1f-4a3c-9e5b-7d9f1a3c5e7b',
};

const TIMESTAMP = '2025-03-14T09:26:53.000Z';
const MERCHANT_CUSTOMER_ID = 'cus_NffrFeUfNV2Hib';
const SLUG = 'jane-doe';

/** Values by field name, where the name alone says what a realistic value is. */
const BY_FIELD: Record<string, unknown> = {
  customer_id: MERCHANT_CUSTOMER_ID,
  customerId: MERCHANT_CUSTOMER_ID,
  external_id: 'in_1PQ7mZLkdIwHu7ixq2Vh8TcR',
  cookie_id: 'ck_4fQ9xZ2mLp7TbW1sRk8Vn3',
  cookieId: 'ck_4fQ9xZ2mLp7TbW1sRk8Vn3',
  ref: SLUG,
  slug: SLUG,
  amount: 49.99,
  commission_amount: 15,
  commission_value: 30,
  stripe_account_id: 'acct_1Nv0FGQ9RKHgCVdK',
  brand_color: '#0a7c4a',
  logo_url: 'https://acme.example/logo.png',
  sender_name: 'Acme Partner Team',
  provider_reference: '5UXD2E8A7EBQJ/8AELMXH8UB2P8',
  failure_reason: null,
  click_window_days: 60,
  commission_window_months: 12,
  currency: 'USD',
  limit: 50,
  landing_url: `https://www.acme.example/pricing?ref=${SLUG}`,
  landingUrl: `https://www.acme.example/pricing?ref=${SLUG}`,
  referrer: 'https://news.example.org/best-tools-2025',
  user_agent:
    'Mozilla/5.0 (Macintosh; Intel Mac OS X 14_4) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Safari/605.1.15',
  ip: '203.0.113.42',
  'x-visitor-ip': '203.0.113.42',
  cookie_max_age_seconds: 60 * 86_400,
  api_key: 'svc-Qm9xLWJ1dC1ub3QtYS1yZWFsLWtleS1mb3ItZG9jcw1',
  redacted: 'svc-Qm9x…cw1',
  revoked_at: null,
  // A conversion as recorded: nothing refunded, so nothing reversed (a refund is its own case below).
  refunded_amount: 0,
  reversed_at: null,
  next_cursor: null,
  signing_secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
  provider: 'stripe',
  organizationId: EXAMPLE_IDS.organization,
  organization_id: EXAMPLE_IDS.organization,
};

/** Names and e-mails depend on whose they are. */
const NAMES: Record<string, string> = {
  organization: 'Acme Inc',
  program: 'Partner program',
  affiliate: 'Jane Doe',
  customer: 'Alex Smith',
};
const EMAILS: Record<string, string> = {
  affiliate: 'jane@partners.example',
  customer: 'alex@customer.example',
};

export interface ExampleContext {
  /** The record the current object is, e.g. `conversion` (from its property name or the operation's resource). */
  entity?: string;
  /** The response status the example is for. */
  status?: number;
  /** The response answers a repeat of an earlier request (200 beside a 201): `deduped: true`. */
  repeat?: boolean;
  /**
   * Records a case shows, by entity: each entry overrides fields of the derived record; a list
   * shows one record per entry (see EXAMPLE_CASES).
   */
  records?: Record<string, Record<string, unknown>[]>;
  /** Which entry of `records` the object being built is (its index in a list). */
  recordIndex?: number;
  /** Request examples leave out alternatives so that they show one sensible call. */
  kind: 'request' | 'response';
  /** Text of `message` in an error body. */
  message?: string;
  /** Resolves `$ref`s. */
  components: Record<string, SchemaObject | ReferenceObject>;
}

/**
 * Optional request fields left out of request examples: the attribution alternatives (one
 * identifier per call; the example shows `cookie_id`) and the rarely used overrides.
 */
const OPTIONAL_FIELDS_NOT_IN_REQUEST_EXAMPLES = new Set([
  'ref',
  'click_id',
  'kind',
  'occurred_at',
  'user_agent',
  'ip',
  'referrer',
  'cursor',
]);

export function singular(word: string): string {
  if (word.endsWith('ies')) return `${word.slice(0, -3)}y`;
  if (word.endsWith('ses')) return word.slice(0, -2);
  return word.endsWith('s') ? word.slice(0, -1) : word;
}

function entityOfIdField(field: string): string | undefined {
  const m = /^(.*?)_?[iI]d$/.exec(field);
  if (!m || !m[1]) return undefined;
  const name = m[1].replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
  if (EXAMPLE_IDS[name]) return name;
  return undefined;
}

function resolve(schema: SchemaObject | ReferenceObject, ctx: ExampleContext): SchemaObject {
  let current = schema;
  for (let depth = 0; '$ref' in current; depth++) {
    if (depth > 20) throw new Error(`$ref cycle at ${current.$ref}`);
    const name = current.$ref.replace('#/components/schemas/', '');
    const target = ctx.components[name];
    if (!target) throw new Error(`Unresolved $ref ${current.$ref}`);
    current = target;
  }
  return current;
}

function stringExample(schema: SchemaObject, field: string | undefined, ctx: ExampleContext): string {
  if (field === 'message' && ctx.message) return ctx.message;
  if (schema.format === 'uuid' || field === 'id') {
    const entity = (field && field !== 'id' && entityOfIdField(field)) || ctx.entity;
    const known = entity && (EXAMPLE_IDS[entity] ?? EXAMPLE_IDS[entity.replace(/_info$/, '')]);
    return known || EXAMPLE_IDS.organization;
  }
  // An id field given as text with a pattern (e.g. a comma-separated list of ids): the entity's id, if it fits.
  const idEntity = field && schema.pattern ? entityOfIdField(field) : undefined;
  if (idEntity && new RegExp(schema.pattern!).test(EXAMPLE_IDS[idEntity])) return EXAMPLE_IDS[idEntity];
  if (schema.format === 'date-time' || field?.endsWith('_at') || field === 'from' || field === 'to') return TIMESTAMP;
  if (schema.format === 'email' || field === 'email') return (ctx.entity && EMAILS[ctx.entity]) || EMAILS.affiliate;
  if (field === 'name') return (ctx.entity && NAMES[ctx.entity]) || 'Acme Inc';
  if (schema.format === 'uri' || field?.endsWith('_url')) return 'https://www.acme.example/';
  const min = schema.minLength ?? 0;
  const base = field ? field.replace(/_/g, '-') : 'value';
  return base.length >= min ? base : base.padEnd(min, 'x');
}

export function exampleFor(
  schema: SchemaObject | ReferenceObject,
  field: string | undefined,
  ctx: ExampleContext,
): unknown {
  const s = resolve(schema, ctx);
  if (s.example !== undefined) return s.example;
  if (s.enum && s.enum.length > 0) return s.enum[0];
  if (field !== undefined && field in BY_FIELD) {
    const value = BY_FIELD[field];
    const fits =
      value === null
        ? s.nullable === true
        : s.type === undefined || s.type === typeof value || (s.type === 'integer' && Number.isInteger(value));
    if (fits) return value;
  }
  if (s.allOf) return Object.assign({}, ...s.allOf.map((part) => exampleFor(part, field, ctx)));
  if (s.oneOf?.[0]) return exampleFor(s.oneOf[0], field, ctx);
  if (s.anyOf?.[0]) return exampleFor(s.anyOf[0], field, ctx);
  switch (s.type) {
    case 'object': {
      const entity = field && field !== 'data' ? singular(field) : ctx.entity;
      const inner = { ...ctx, entity, recordIndex: undefined };
      const out: Record<string, unknown> = {};
      for (const [name, prop] of Object.entries(s.properties ?? {})) {
        const required = s.required?.includes(name) ?? false;
        if (ctx.kind === 'request' && !required && OPTIONAL_FIELDS_NOT_IN_REQUEST_EXAMPLES.has(name)) continue;
        out[name] = exampleFor(prop, name, inner);
      }
      // A record is an item of a list or the value of a field named after it (`conversion`), not
      // the envelope around it.
      const isRecord = ctx.recordIndex !== undefined || (field !== undefined && field !== 'data');
      const override = isRecord && entity ? ctx.records?.[entity]?.[ctx.recordIndex ?? 0] : undefined;
      for (const [name, value] of Object.entries(override ?? {})) {
        // A case naming a field the schema lacks (renamed, removed) must not pass unnoticed.
        if (!(name in out)) throw new Error(`Example case for ${entity}: no field ${name} in its schema`);
        out[name] = value;
      }
      return out;
    }
    case 'array': {
      if (!s.items) return [];
      const entity = field ? singular(field) : ctx.entity;
      const items = resolve(s.items, ctx);
      const itemField = items.type === 'object' ? undefined : field ? singular(field) : undefined;
      const count = (entity && ctx.records?.[entity]?.length) || 1;
      return Array.from({ length: count }, (_, i) =>
        exampleFor(s.items!, itemField, { ...ctx, entity, recordIndex: i }),
      );
    }
    case 'boolean':
      if (field === 'deduped') return ctx.repeat === true;
      return false;
    case 'integer':
    case 'number': {
      const min = typeof s.minimum === 'number' ? s.minimum : 1;
      return s.maximum !== undefined && s.maximum < min ? s.maximum : Math.max(min, 1);
    }
    case 'string':
      return stringExample(s, field, ctx);
    default:
      return s.nullable ? null : {};
  }
}

// ---------------------------------------------------------------------------------------------
// Cases: operations whose examples show particular states of a record. The derived record is the
// common case (a conversion approved, nothing refunded); a case overrides only the fields that
// make it what it is, and every record of a case is consistent in itself (status, refunded_amount,
// reversed_at and commission_amount agree; test/openapi/document.test.ts checks it against the
// program example's commission rule: 30 % of 49.99 is 15.00).

/** One case of an operation: a named example of its request and of its success responses. */
export interface ExampleCase {
  summary: string;
  /** The request body as sent (replaces the derived request example). */
  request?: Record<string, unknown>;
  /** Records of the success responses, by entity: field overrides of the derived record, one per record. */
  records?: Record<string, Record<string, unknown>[]>;
}

/** A charge of 49.99 whose commission (15.00) stands: the derived conversion, untouched. */
const CONVERSION_APPROVED: Record<string, unknown> = {};

/** 20.00 of 49.99 refunded: still approved, the commission reduced in proportion (15 × 29.99 / 49.99 = 9.00). */
const CONVERSION_PARTIALLY_REFUNDED: Record<string, unknown> = {
  status: 'approved',
  refunded_amount: 20,
  commission_amount: 9,
  reversed_at: null,
};

/** Refunded in full: reversed when the refund was reported, no commission owed. */
const CONVERSION_FULLY_REFUNDED: Record<string, unknown> = {
  status: 'reversed',
  refunded_amount: 49.99,
  commission_amount: 0,
  reversed_at: '2025-03-20T16:04:12.000Z',
};

/** Keyed by operationId. One case: the operation's `example`; several: its named `examples`. */
export const EXAMPLE_CASES: Record<string, Record<string, ExampleCase>> = {
  conversionsRefund: {
    full: {
      summary: 'Full refund: no body (or `{}`); the conversion is reversed and its commission is 0',
      request: {},
      records: { conversion: [CONVERSION_FULLY_REFUNDED] },
    },
    partial: {
      summary: 'Partial refund of 20.00: still approved, the commission reduced in proportion',
      request: { amount: 20, refund_id: 're_3PQ9aBLkdIwHu7ix0vKq4Wz8' },
      records: { conversion: [CONVERSION_PARTIALLY_REFUNDED] },
    },
  },
  conversionsList: {
    // Newest occurred_at first: two renewals of the customer, one refunded in full and one in
    // part, then the first sale, untouched.
    history: {
      summary: "A customer's conversions: a fully refunded renewal, a partly refunded renewal, the first sale",
      records: {
        conversion: [
          {
            ...CONVERSION_FULLY_REFUNDED,
            id: 'b7d9f1a3-5c7e-4b9d-8f1a-3c5e7a9b1d3f',
            external_id: 'in_1RAv2hLkdIwHu7ixYp4Tq9Ws',
            kind: 'recurring',
            occurred_at: '2025-05-14T09:26:53.000Z',
            created_at: '2025-05-14T09:26:53.000Z',
            reversed_at: '2025-05-16T11:40:02.000Z',
          },
          {
            ...CONVERSION_PARTIALLY_REFUNDED,
            id: 'e2a4c6e8-0b2d-4f4a-9c6e-8a0c2e4b6d8f',
            external_id: 'in_1QyH3sLkdIwHu7ixWn2Ck5Rd',
            kind: 'recurring',
            occurred_at: '2025-04-14T09:26:53.000Z',
            created_at: '2025-04-14T09:26:53.000Z',
          },
          CONVERSION_APPROVED,
        ],
      },
    },
  },
};
