import { initContract } from '@ts-rest/core';
import { z } from 'zod';
import { jsonBodyErrorResponses } from '../common/errors.js';

const c = initContract();

export const DataRetention = z
  .object({
    click_retention_days: z
      .number()
      .int()
      .nullable()
      .describe(
        "Clicks older than this many days (and older than the organization's longest click window, so that no click a visitor may still convert on goes) are deleted by a daily job when nothing refers to them; a click a customer or conversion refers to keeps only what the ledger needs (its `ip` and `user_agent` are cleared). Suppressed clicks past it are deleted. null: clicks are kept.",
      ),
  })
  .describe("The organization's data retention settings.");

export const UpdateDataRetentionBody = z.object({
  click_retention_days: z
    .number()
    .int()
    .min(1)
    .max(3650)
    .nullable()
    .describe('Days to keep clicks, 1 to 3650; null keeps them without limit.'),
});

const DataRetentionEnvelope = z.object({ success: z.literal(true), data: z.object({ data_retention: DataRetention }) });

export const dataRetentionContract = c.router({
  get: {
    method: 'GET',
    path: '/api/data-retention',
    summary: 'Get the data retention settings',
    description: 'How long the organization keeps clicks (docs/data-lifecycle.md).',
    responses: { 200: DataRetentionEnvelope },
  },
  update: {
    method: 'PUT',
    path: '/api/data-retention',
    summary: 'Set the data retention settings',
    description: 'Sets how long the organization keeps clicks. The daily job applies it from its next run.',
    body: UpdateDataRetentionBody,
    responses: { 200: DataRetentionEnvelope, ...jsonBodyErrorResponses },
  },
});

export type DataRetention = z.infer<typeof DataRetention>;
export type UpdateDataRetentionBody = z.infer<typeof UpdateDataRetentionBody>;
