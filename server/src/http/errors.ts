import { ErrorMessages } from '@affiliate-attribution/contract';

/**
 * Typed domain errors. Services throw them; the one error handler (error-handler.ts) turns them
 * into `{ success: false, message }` with their status. Nothing else writes an error response.
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

export class BadRequestError extends HttpError {
  constructor(message: string) {
    super(400, message);
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
export class NotFoundError extends HttpError {
  constructor(message: string = ErrorMessages.notFound) {
    super(404, message);
  }
}
export class AttributionNotFoundError extends NotFoundError {
  constructor() {
    super(ErrorMessages.noAttribution);
  }
}
export class ConflictError extends HttpError {
  constructor(message: string) {
    super(409, message);
  }
}
export class AttributionWindowExpiredError extends HttpError {
  constructor() {
    super(410, ErrorMessages.attributionWindowExpired);
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
