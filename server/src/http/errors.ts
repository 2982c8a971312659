import { ErrorMessages } from '@affiliate-attribution/contract';

export {
  AttributionWindowExpiredError,
  ConflictError,
  DomainError,
  InvalidInputError as BadRequestError,
  NoAttributionError as AttributionNotFoundError,
  NotFoundError,
} from '../domain-errors.js';

/**
 * Refusals of the transport (authentication, permission, rate, an unavailable dependency), with
 * their status. The domain's refusals are domain-errors.ts's, exported here under their HTTP
 * names for the modules' routers and services; the one error handler (error-handler.ts) maps both
 * to `{ success: false, message }` with their status. Nothing else writes an error response.
 */
export class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
    this.name = new.target.name;
  }
}

export class UnauthorizedError extends HttpError {
  constructor(message: string = ErrorMessages.invalidApiKey) {
    super(401, message);
  }
}
export class ForbiddenError extends HttpError {
  constructor(message: string = ErrorMessages.forbidden) {
    super(403, message);
  }
}
export class TooManyRequestsError extends HttpError {
  constructor(retryAfterSeconds: number) {
    super(429, 'Too many requests; retry later', { 'Retry-After': String(Math.max(1, Math.ceil(retryAfterSeconds))) });
  }
}
export class ServiceUnavailableError extends HttpError {
  constructor(message = 'Service temporarily unavailable; safe to retry') {
    super(503, message);
  }
}
