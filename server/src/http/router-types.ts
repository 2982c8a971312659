import type { NextFunction, Response } from 'express';
import type { AppRoute } from '@ts-rest/core';
import { initServer, type RequestValidationError } from '@ts-rest/express';

/** The one ts-rest server instance; routers are typed against the contract through it. */
export const s = initServer();

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
export type MatchedRouteMiddleware = (req: Express.Request & { tsRestRoute: AppRoute }, res: Response, next: NextFunction) => void;
