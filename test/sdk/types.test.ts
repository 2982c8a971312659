/**
 * Type tests: checked by `tsc -p tsconfig.json` (the root project includes test/). Every
 * `@ts-expect-error` below must be an error, or tsc fails with "Unused '@ts-expect-error' directive".
 * The calls live in functions that never run: only their types matter.
 */
import type { z } from 'zod';
import { describe, expectTypeOf, it } from 'vitest';
import type {
  Conversion as ContractConversion,
  Customer as ContractCustomer,
  Integration as ContractIntegration,
  MeOrganization as ContractOrganization,
  Program as ContractProgram,
  CreateConversionBody,
  merchantContract,
} from '../../contract/src/index.js';
import {
  APIError,
  Client,
  Page,
  PagePromise,
  type APIPromise,
  type Affiliate,
  type Conversion,
  type ConversionCreateParams,
  type Customer,
  type CustomerStatus,
  type Integration,
  type Organization,
  type Program,
  type RequestBody,
  type ResultOf,
} from '../../client-sdk/src/index.js';

// A real client, but the type tests never call it: its fetch refuses to be used.
const client = new Client({
  apiKey: 'svc-types-only',
  baseUrl: 'http://127.0.0.1:9',
  fetch: () => Promise.reject(new Error('type tests send no request')),
});

/** Every type the README names exists and is not `any`. */
type ReadmeTypes = [
  import('../../client-sdk/src/index.js').Click,
  import('../../client-sdk/src/index.js').ConversionKind,
  import('../../client-sdk/src/index.js').ConversionStatus,
  import('../../client-sdk/src/index.js').WebhookProvider,
  import('../../client-sdk/src/index.js').ProgramCreateParams,
  import('../../client-sdk/src/index.js').AffiliateCreateParams,
  import('../../client-sdk/src/index.js').ClickCreateParams,
  import('../../client-sdk/src/index.js').CustomerCreateParams,
  import('../../client-sdk/src/index.js').CustomerUpdateParams,
  import('../../client-sdk/src/index.js').ConversionListParams,
  import('../../client-sdk/src/index.js').ConversionRefundParams,
  import('../../client-sdk/src/index.js').CustomerCreateResult,
  import('../../client-sdk/src/index.js').ConversionCreateResult,
];
type IsAny<T> = 0 extends 1 & T ? true : false;

describe('SDK types follow the contract', () => {
  it('models are the contract schemas', () => {
    expectTypeOf<Customer>().toEqualTypeOf<ContractCustomer>();
    expectTypeOf<Conversion>().toEqualTypeOf<ContractConversion>();
    expectTypeOf<Program>().toEqualTypeOf<ContractProgram>();
    expectTypeOf<Organization>().toEqualTypeOf<ContractOrganization>();
    expectTypeOf<Integration>().toEqualTypeOf<ContractIntegration>();
    expectTypeOf<CustomerStatus>().toEqualTypeOf<'trial' | 'active' | 'capped' | 'canceled'>();
    // Inputs are the schemas' input types: what the service accepts.
    expectTypeOf<ConversionCreateParams>().toEqualTypeOf<
      z.input<typeof import('../../contract/src/index.js').CreateConversionBody>
    >();
    expectTypeOf<ConversionCreateParams>().toMatchTypeOf<CreateConversionBody>();
    expectTypeOf<RequestBody<(typeof merchantContract)['customers']['update']>>().toEqualTypeOf<{
      status: CustomerStatus;
    }>();
  });

  it('the named types of the README are real types', () => {
    expectTypeOf<{ [K in keyof ReadmeTypes]: IsAny<ReadmeTypes[K]> }[number]>().toEqualTypeOf<false>();
    expectTypeOf<import('../../client-sdk/src/index.js').WebhookProvider>().toEqualTypeOf<
      'stripe' | 'paddle' | 'lemonsqueezy' | 'polar' | 'chargebee'
    >();
    expectTypeOf<import('../../client-sdk/src/index.js').ConversionStatus>().toEqualTypeOf<'approved' | 'reversed'>();
  });

  it('methods resolve to the envelope data, with deduped on repeatable writes only', () => {
    expectTypeOf(client.me).returns.toEqualTypeOf<APIPromise<{ organization: Organization }>>();
    expectTypeOf(client.customers.create).returns.resolves.toEqualTypeOf<{ customer: Customer; deduped: boolean }>();
    expectTypeOf(client.conversions.create).returns.resolves.toEqualTypeOf<{
      conversion: Conversion;
      deduped: boolean;
    }>();
    expectTypeOf(client.conversions.refund).returns.resolves.toEqualTypeOf<{
      conversion: Conversion;
      deduped: boolean;
    }>();
    expectTypeOf(client.affiliates.create).returns.resolves.toEqualTypeOf<{ affiliate: Affiliate; deduped: boolean }>();
    expectTypeOf(client.customers.get).returns.resolves.toEqualTypeOf<{ customer: Customer }>();
    expectTypeOf(client.customers.update).returns.resolves.toEqualTypeOf<{ customer: Customer }>();
    expectTypeOf(client.programs.create).returns.resolves.toEqualTypeOf<{ program: Program }>();
    expectTypeOf(client.integrations.list).returns.resolves.toEqualTypeOf<{ integrations: Integration[] }>();
    expectTypeOf<
      ResultOf<(typeof merchantContract)['clicks']['create']>['click']['cookie_id']
    >().toEqualTypeOf<string>();
  });

  it('lists are pages of the right item, iterable with for await', () => {
    expectTypeOf(client.conversions.list).returns.toEqualTypeOf<PagePromise<Conversion>>();
    expectTypeOf(client.conversions.list).returns.resolves.toEqualTypeOf<Page<Conversion>>();
    expectTypeOf(client.affiliates.list).returns.toMatchTypeOf<AsyncIterable<Affiliate>>();
    expectTypeOf(client.programs.list).returns.resolves.toHaveProperty('data').toEqualTypeOf<Program[]>();
    expectTypeOf(client.programs.list).returns.resolves.toHaveProperty('nextCursor').toEqualTypeOf<string | null>();
    expectTypeOf<APIError['status']>().toEqualTypeOf<number>();
    expectTypeOf<APIError['requestId']>().toEqualTypeOf<string | undefined>();
  });
});

// Wrong calls must not compile. Never run.
export async function compileOnly(): Promise<void> {
  // @ts-expect-error misspelt field name
  await client.customers.create({ custmer_id: 'cus_1', cookie_id: 'ck_1' });
  // @ts-expect-error customer_id is required
  await client.customers.create({ cookie_id: 'ck_1' });
  // @ts-expect-error not a customer status
  await client.customers.update('cus_1', { status: 'deleted' });
  // @ts-expect-error amount is a number, not a string
  await client.conversions.create({ external_id: 'inv_1', amount: '49.99', customer_id: 'cus_1' });
  // @ts-expect-error external_id is required
  await client.conversions.create({ amount: 49.99, customer_id: 'cus_1' });
  // @ts-expect-error kind is initial or recurring
  await client.conversions.create({ external_id: 'inv_1', amount: 1, customer_id: 'cus_1', kind: 'renewal' });
  // @ts-expect-error unknown list filter
  void client.conversions.list({ customer: 'cus_1' });
  // @ts-expect-error limit is a number
  void client.conversions.list({ limit: '10' });
  // @ts-expect-error refund amount is a number
  await client.conversions.refund('inv_1', { amount: '5' });
  // @ts-expect-error not a supported provider
  await client.integrations.set('paypal', { signing_secret: 'whsec_0123456789' });
  // One body for every provider (a payment provider's secret, a payout rail's credentials): the service names the missing field (test/webhooks/integrations.test.ts).
  // @ts-expect-error commission_value is required
  await client.programs.create({ name: 'Main' });
  // @ts-expect-error an id is a string
  await client.customers.get(42);

  const created = await client.customers.create({ customer_id: 'cus_1', ref: 'acme' });
  const fetched = await client.customers.get('cus_1');
  // @ts-expect-error reads carry no deduped
  void fetched.deduped;
  // @ts-expect-error no such field on a customer
  void created.customer.affiliate;
  for await (const conversion of client.conversions.list()) {
    // @ts-expect-error amount is a number
    conversion.amount.toUpperCase();
  }
  // @ts-expect-error apiKey is required
  new Client({ baseUrl: 'https://x.example' });
}
