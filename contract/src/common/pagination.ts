import { z } from 'zod';

export const PAGE_LIMIT_DEFAULT = 50;
export const PAGE_LIMIT_MAX = 100;

export const PageQuery = z.object({
  limit: z.coerce
    .number()
    .int()
    .min(1)
    .max(PAGE_LIMIT_MAX)
    .optional()
    .describe(`Page size, 1 to ${PAGE_LIMIT_MAX}; default ${PAGE_LIMIT_DEFAULT}.`),
  cursor: z.string().min(1).optional().describe('The `next_cursor` of the previous page; omit for the first page.'),
});

export const NextCursor = z
  .string()
  .nullable()
  .describe('Pass as `cursor` to get the next page; null on the last page.');
