import { describe, expect, it } from 'vitest';
import { accessOf, contract } from '@affiliate-attribution/contract';
import { hotRoute } from '../../server/src/http/hot-routes.js';

/**
 * The access rule (a member's session, a test key) runs in Express, as ts-rest's globalMiddleware
 * (server/src/modules/people/route-access.ts): the hot lane, which serves ahead of Express, must
 * never be given a route that has one, or the rule would be skipped for it.
 */
describe('the hot lane and the access rule', () => {
  const implementation = async () => ({ status: 200, body: {} });

  it('refuses, at start, a route that has an access rule, whatever the rule', () => {
    for (const route of [contract.payouts.send, contract.imports.create, contract.people.createInvitation]) {
      expect(accessOf(route)).toBeDefined();
      expect(() => hotRoute(route, implementation as never)).toThrow(
        `${route.method} ${route.path}: a route with an access rule (owner-only, no test key) is not a hot route`,
      );
    }
  });

  it('takes a route without one', () => {
    expect(accessOf(contract.conversions.create)).toBeUndefined();
    expect(hotRoute(contract.conversions.create, implementation as never).route).toBe(contract.conversions.create);
  });
});
