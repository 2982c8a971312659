import { initContract } from '@ts-rest/core';
import { z } from 'zod';
import { errorResponses, jsonBodyErrorResponses } from '../common/errors.js';
import { Identifier, Livemode, OccurredAtInput, Timestamp, Uuid } from '../common/primitives.js';

const c = initContract();

export const Click = z
  .object({
    id: Uuid.describe('Click id: the `click_id` usable for attribution.'),
    cookie_id: z
      .string()
      .describe(
        "Opaque tracking id (`ck_…`) to store in the `svc_aff` cookie and send back as `cookie_id`: this click's, or an earlier click's when `kept_earlier_click` is true.",
      ),
    kept_earlier_click: z
      .boolean()
      .describe(
        "true: `cookie_id` is an earlier click's, which keeps the visitor: the visitor's own under the program's `first_click` model, the address's first click of the window when this one is a click flood's surplus, or the same visit's click when `cookie_id` was sent and is a click of the same affiliate made within 30 minutes (a second capture of one visit: the server middleware and the snippet on one page, or a reload); then nothing new is recorded and `id` is that click's.",
      ),
    cookie_max_age_seconds: z
      .number()
      .int()
      .describe("Lifetime to give the `svc_aff` cookie: the program's click window in seconds (0: a session cookie)."),
    suppressed: z
      .boolean()
      .describe(
        "true: a click flood's surplus (more than 10 clicks within 60 s from one address on one link, the program's `click_flood` rule): stored for the record only, counted nowhere, never attributed.",
      ),
    affiliate_id: Uuid.describe('Affiliate credited with the click.'),
    program_id: Uuid.describe('Program of that affiliate.'),
    occurred_at: Timestamp.describe('When the click happened; the click window is measured from it.'),
    created_at: Timestamp,
    livemode: Livemode,
  })
  .describe('Click');

export const CreateClickBody = z.object({
  ref: Identifier.describe('Affiliate slug from the `?ref=` parameter.'),
  landing_url: z.string().max(2048).optional().describe('Page the visitor landed on.'),
  referrer: z.string().max(2048).optional().describe('HTTP referrer of the visit.'),
  user_agent: z.string().max(1024).optional().describe("Visitor's user agent."),
  ip: z.string().max(64).optional().describe("Visitor's IP address."),
  occurred_at: OccurredAtInput.optional().describe(
    'When the click happened (default now); for importing clicks captured elsewhere. From 2000-01-01T00:00:00Z to at most 5 minutes in the future.',
  ),
  cookie_id: z
    .string()
    .max(255)
    .optional()
    .describe(
      "The visitor's current `svc_aff` cookie, if any. Under the program's `first_click` model a valid one (a click of this organization within its click window) is kept: the click is recorded, and `cookie_id` in the answer is that earlier click's. Under either model, a cookie that is a click of the same affiliate made within 30 minutes is the same visit captured again: that click is answered and no new one is recorded.",
    ),
});

export const clicksContract = c.router({
  create: {
    method: 'POST',
    path: '/api/clicks',
    summary: 'Register a click server-side',
    description:
      'Records a click on an affiliate link and returns the `cookie_id` and click id to attribute later customers and conversions with. An unknown `ref` answers 404 "No attribution found".',
    body: CreateClickBody,
    responses: {
      201: z.object({ success: z.literal(true), data: z.object({ click: Click }) }),
      ...jsonBodyErrorResponses,
      404: errorResponses[404],
    },
  },
});

export type Click = z.infer<typeof Click>;
