/** How the SDK's resources send their requests: one Requester per client, over its transport. */
import { merchantContract } from '@affiliate-attribution/contract';
import type { AppRoute } from '@ts-rest/core';
import { APIPromise, type APIResponse } from './core/api-promise.js';
import { Page, PagePromise } from './core/pagination.js';
import type { Envelope, RequestOptions, Transport } from './core/transport.js';
import type { PageItem, ResultOf } from './types.js';

/** The merchant routes of the service's contract; every type of the SDK is computed from it. */
export type Routes = typeof merchantContract;

/** A POST can be repeated safely only when the contract marks it with `deduped`. */
function isIdempotent(route: AppRoute): boolean {
  if (route.method !== 'POST') return true;
  return Object.values(route.responses).some((schema) => {
    const shape = (schema as { shape?: unknown } | null)?.shape;
    return typeof shape === 'object' && shape !== null && 'deduped' in shape;
  });
}

export function pathFor(route: AppRoute, params: Record<string, unknown> = {}): string {
  return route.path.replace(/:([A-Za-z0-9_]+)/g, (_match, name: string) => {
    const value = params[name];
    if ((typeof value !== 'string' && typeof value !== 'number') || value === '') {
      throw new TypeError(`${route.method} ${route.path}: path parameter "${name}" must be a non-empty string`);
    }
    return encodeURIComponent(String(value));
  });
}

function unwrap(envelope: Envelope): Record<string, unknown> {
  const result: Record<string, unknown> = { ...(envelope.data ?? {}) };
  if (typeof envelope.deduped === 'boolean') result.deduped = envelope.deduped;
  return result;
}

interface CallArgs {
  params?: Record<string, unknown>;
  query?: Record<string, unknown>;
  body?: unknown;
}

/** Sends requests for the resources; one per client. */
export class Requester {
  constructor(private readonly transport: Transport) {}

  call<R extends AppRoute>(route: R, args: CallArgs, options?: RequestOptions): APIPromise<ResultOf<R>> {
    return new APIPromise(this.send(route, args, options, (envelope) => unwrap(envelope) as ResultOf<R>));
  }

  list<R extends AppRoute>(
    route: R,
    query: Record<string, unknown> | undefined,
    options?: RequestOptions,
  ): PagePromise<PageItem<R>> {
    type Item = PageItem<R>;
    const fetchPage = (cursor: string | undefined): Promise<APIResponse<Page<Item>>> =>
      this.send(route, { query: { ...query, cursor } }, options, (envelope) => {
        const data = envelope.data ?? {};
        const items = Object.entries(data).find(([key, value]) => key !== 'next_cursor' && Array.isArray(value))?.[1];
        const next = typeof data.next_cursor === 'string' && data.next_cursor !== '' ? data.next_cursor : null;
        return new Page<Item>((items ?? []) as Item[], next, fetchPage);
      });
    return new PagePromise(fetchPage(query?.cursor as string | undefined));
  }

  private send<R extends AppRoute, T>(
    route: R,
    args: CallArgs,
    options: RequestOptions | undefined,
    map: (envelope: Envelope) => T,
  ) {
    try {
      const path = pathFor(route, args.params);
      return this.transport.request(
        { method: route.method, path, query: args.query, body: args.body, idempotent: isIdempotent(route) },
        options,
        map,
      );
    } catch (err) {
      // eslint-disable-next-line @typescript-eslint/prefer-promise-reject-errors -- passes on what pathFor threw, unchanged
      return Promise.reject(err);
    }
  }
}

export abstract class Resource {
  constructor(protected readonly requester: Requester) {}
}
