import { ApiError } from '../api';

export { api, data, ApiError } from '../api';

/** The answer's `data`, or an ApiError with the service's message (429: when to try again). */
export function orThrow<R extends { status: number; body: unknown; headers: Headers }>(
  res: R,
): Extract<R, { status: 200 | 201 | 202 }>['body'] extends { data: infer D } ? D : never {
  if (res.status >= 200 && res.status < 300) return (res.body as { data: never }).data;
  const body = res.body as { message?: string } | null;
  const message =
    res.status === 429
      ? `Too many requests; try again in ${res.headers.get('retry-after') ?? 'a few'} seconds`
      : (body?.message ?? `Request failed (${res.status})`);
  throw new ApiError(res.status, message);
}
