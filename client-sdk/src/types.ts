import type { AppRoute, ZodInferOrType, ZodInputOrType } from '@ts-rest/core';

/**
 * Request and response types are computed from the contract's routes, never written by hand:
 * a field added to the contract appears here on the next build.
 */

type Simplify<T> = { [K in keyof T]: T[K] } & {};

/** The JSON body a route accepts (what you pass to `create`/`update`). */
export type RequestBody<R extends AppRoute> = R extends { body: infer B } ? ZodInputOrType<B> : never;

/** The query parameters a route accepts (filters and pagination of `list`). */
export type RequestQuery<R extends AppRoute> = R extends { query: infer Q } ? ZodInputOrType<Q> : never;

/** The path parameters of a route, e.g. `{ id: string }`. */
export type PathParams<R extends AppRoute> = R extends { pathParams: infer P } ? ZodInputOrType<P> : never;

type SuccessStatus<R extends AppRoute> = Extract<keyof R['responses'], 200 | 201 | 202>;

/** The body of a successful response (`{ success: true, data, deduped? }`). */
export type SuccessBody<R extends AppRoute> = {
  [S in SuccessStatus<R>]: ZodInferOrType<R['responses'][S]>;
}[SuccessStatus<R>];

/**
 * What a method resolves to: the `data` of the response envelope, plus `deduped` on writes that
 * can repeat (true when the request repeated an earlier one and the existing record is returned).
 */
export type ResultOf<R extends AppRoute> =
  SuccessBody<R> extends { data: infer D }
    ? Simplify<D & (SuccessBody<R> extends { deduped: infer X } ? { deduped: X } : unknown)>
    : never;

/** The item type of a paginated route: the element of the array next to `next_cursor`. */
export type PageItem<R extends AppRoute> = {
  [K in keyof ResultOf<R>]: ResultOf<R>[K] extends ReadonlyArray<infer I> ? I : never;
}[Exclude<keyof ResultOf<R>, 'next_cursor'>];
