import type { NextFunction, Response } from 'express';
import type { AppRoute, AppRouter } from '@ts-rest/core';
import { initServer, type RequestValidationError } from '@ts-rest/express';
import { withLivemode } from './livemode.js';

const server = initServer();

/**
 * The one ts-rest server instance; routers are typed against the contract through it. Every
 * router's answers carry `livemode` wherever the contract declares it (http/livemode.ts).
 */
export const s = {
  router: <T extends AppRouter, TRouter extends Parameters<typeof server.router<T>>[1]>(
    contract: T,
    router: TRouter,
  ): TRouter => withLivemode(contract, server.router(contract, router)),
};

/**
 * What every contract router is mounted with (app.ts builds it once): the validation-error
 * handler, and the middleware ts-rest runs once it has matched a route (the roles' rule,
 * modules/people/route-access.ts).
 */
export interface EndpointOptions {
  requestValidationErrorHandler: (err: RequestValidationError) => never;
  logInitialization: false;
  globalMiddleware: MatchedRouteMiddleware[];
}

/** Middleware ts-rest runs once it has matched a route: it sees the route and what the pipeline put on the request. */
export type MatchedRouteMiddleware = (
  req: Express.Request & { tsRestRoute: AppRoute },
  res: Response,
  next: NextFunction,
) => void;
