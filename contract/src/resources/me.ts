import { initContract } from '@ts-rest/core';
import { z } from 'zod';
import { Livemode, Uuid } from '../common/primitives.js';
import { LinkParams } from './link-params.js';

const c = initContract();

export const Organization = z
  .object({
    id: Uuid.describe('Identifier of the organization; also used in webhook URLs and by the snippet.'),
    name: z.string().describe('Organization name.'),
    livemode: Livemode.describe(
      'False when the request used a test key (or a test-mode dashboard session): it reads and writes test data. `id` is the same in both modes.',
    ),
  })
  .describe('Organization');

/** The organization as GET /api/me shows it: with its tracking settings. */
export const MeOrganization = Organization.extend({ link_params: LinkParams }).describe('Organization');

export const meContract = c.router({
  get: {
    method: 'GET',
    path: '/api/me',
    summary: 'The organization of the API key',
    description:
      'Returns the organization the API key belongs to, whether the key is live or test (`livemode`), and the query parameters its links use (`link_params`). Usable as an authenticated health check.',
    responses: {
      200: z.object({ success: z.literal(true), data: z.object({ organization: MeOrganization }) }),
    },
  },
});

export type Organization = z.infer<typeof Organization>;
export type MeOrganization = z.infer<typeof MeOrganization>;
