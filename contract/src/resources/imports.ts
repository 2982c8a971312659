import { initContract } from '@ts-rest/core';
import { z } from 'zod';
import { IMPORTS_ACCESS, restricted } from '../common/access.js';
import { errorResponses, jsonBodyErrorResponses } from '../common/errors.js';
import { NextCursor, PageQuery } from '../common/pagination.js';
import { Livemode, Timestamp, Uuid } from '../common/primitives.js';

const c = initContract();

export const ImportSource = z
  .enum(['rewardful', 'tolt', 'firstpromoter', 'partnerstack', 'tapfiliate', 'csv'])
  .describe(
    'Where the program comes from: Rewardful, Tolt, FirstPromoter, PartnerStack and Tapfiliate through their APIs, or a CSV file (docs/imports.md).',
  );

export const ImportStatus = z
  .enum(['running', 'succeeded', 'failed', 'cancelled', 'undone'])
  .describe(
    '`running`: queued, importing, or waiting to try the source again (`progress.retry`, and `error` says why); `succeeded`: done (a dry run: counted); `failed`: stopped, `error` says why; `cancelled`: stopped on request, what it had written kept (undo removes it); `undone`: what it wrote was removed (`DELETE /api/imports/{id}`, at `undone_at`); it stays listed with its counts.',
  );

export const ImportKind = z
  .enum(['affiliates', 'customers', 'conversions', 'commissions', 'payouts'])
  .describe('A kind of row an import brings.');

const KindCounts = z
  .object({
    created: z.number().int().describe('Rows this import created (a dry run: would create).'),
    already_present: z
      .number()
      .int()
      .describe(
        'Rows found already here (an earlier run of the same source, or a partner with the same e-mail): left as they are.',
      ),
    skipped: z.number().int().describe('Source rows that could not be mapped; `skipped` lists why.'),
  })
  .describe('What became of one kind of source row.');

export const ImportSkip = z
  .object({
    kind: ImportKind,
    source_id: z.string().describe("The row's id at the source."),
    reason: z.string().describe('Why it was not imported.'),
  })
  .describe('One source row left out, with its reason.');

export const ImportTermsChoice = z
  .enum(['source', 'program'])
  .describe(
    "When the source's campaign terms differ from the program's: `source`: the program takes the source's terms (commission type and value, minimum payout, commission period, count cap, hold and click window); `program`: the program keeps its own, and renewals of imported customers earn them.",
  );

export const ImportTerms = z
  .object({
    read: z
      .boolean()
      .describe("Whether the source's API gives its campaign terms (Rewardful's campaigns); false: not compared."),
    campaigns: z.number().int().describe('Campaigns read.'),
    differences: z
      .array(
        z.object({
          campaign: z.string().describe("The campaign's name at the source."),
          field: z
            .string()
            .describe(
              'The program field: `commission_type`, `commission_value`, `minimum_payout`, `commission_window_months`, `commission_max_conversions`, `hold_days`, `click_window_days` or `currency`.',
            ),
          source: z.string().nullable().describe("The source's value (null: none, no limit)."),
          program: z.string().nullable().describe("The program's value (null: none, no limit)."),
        }),
      )
      .describe("Where the source's terms differ from the program's."),
    applied: ImportTermsChoice.nullable().describe(
      'Which terms a real run went on with; null: a dry run, or nothing to choose.',
    ),
  })
  .describe("The source's campaign terms against the program's, read before anything is imported.");

export const Import = z
  .object({
    id: Uuid.describe('Import id.'),
    source: ImportSource,
    program_id: Uuid.describe('The program the partners join and the history is recorded in.'),
    dry_run: z.boolean().describe('True: nothing was written; the counts say what a real run would do.'),
    status: ImportStatus,
    progress: z
      .object({
        phase: z
          .string()
          .describe(
            'What is being read now: `affiliates`, `customers`, `payouts`, `commissions`, `writing` (a dry run) or `done`.',
          ),
        pages: z.number().int().describe('Pages read from the source so far.'),
        retry: z
          .object({
            attempt: z.number().int().describe('The number of the next try (the first try is 1).'),
            max_attempts: z.number().int().describe('How many tries the import makes before it fails.'),
            at: Timestamp.describe('When the next try starts (at the earliest).'),
            reason: z
              .string()
              .describe('Why the last try stopped: the source unreachable, its server errors, its rate limit.'),
          })
          .nullable()
          .describe('While the source cannot be read for now: the next try, when and why; null otherwise.'),
      })
      .describe('How far the import has come.'),
    counts: z.record(ImportKind, KindCounts).describe('Per kind of row: created, already present, skipped.'),
    skipped: z.array(ImportSkip).describe('The rows skipped, with their reasons (the first 1,000).'),
    error: z
      .string()
      .nullable()
      .describe(
        'Why the import failed (a wrong credential, the source unreachable), or, while it runs, why it is waiting to try again; never quoting a credential; null otherwise.',
      ),
    created_at: Timestamp,
    finished_at: Timestamp.nullable().describe('When it succeeded, failed or was cancelled.'),
    undone_at: Timestamp.nullable().describe('When it was undone (status `undone`); null otherwise.'),
    terms: ImportTerms.nullable().describe('The terms compared; null until read.'),
    livemode: Livemode,
  })
  .describe('An import of a program from another platform.');

export const CreateImportBody = z.object({
  source: ImportSource,
  credentials: z
    .record(z.string(), z.string())
    .describe(
      "As the source names them: Rewardful `{ api_secret }` (its API Secret, sent as the Basic auth user name); Tolt `{ api_key, program_id }` (its API key, sent as a Bearer token, and the `prg_…` program to import); FirstPromoter `{ api_key, account_id, currency? }` (its v2 API key, sent as a Bearer token, the Account ID, sent as `ACCOUNT-ID`, and optionally the account's ISO 4217 currency, which FirstPromoter's commissions and payouts do not name); PartnerStack `{ public_key, secret_key }` (its API keys, sent as Basic auth) or `{ access_token }` (Bearer); Tapfiliate `{ api_key }` (sent as `X-Api-Key`); CSV `{ affiliates_csv, conversions_csv? }` (headers in docs/imports.md). Kept encrypted while the import runs, erased when it ends.",
    ),
  program_id: Uuid.describe('The program to import into (yours).'),
  dry_run: z.boolean().default(false).describe('True: read everything, write nothing, report what would happen.'),
  terms: ImportTermsChoice.optional().describe(
    "Needed by a real run when the source's terms differ from the program's (a dry run lists them in `terms.differences`): without it, such an import fails before writing anything, naming the differences.",
  ),
});

const ImportEnvelope = z.object({ success: z.literal(true), data: z.object({ import: Import }) });
const idParam = z.object({ id: z.string().describe('Import id (UUID).') });

/** Owner-only routes (common/access.ts): the dashboard's Imports page is an owner's. */
export const importsContract = c.router(
  restricted(IMPORTS_ACCESS, {
    create: {
      method: 'POST',
      path: '/api/imports',
      summary: 'Start an import',
      description:
        'Queues an import of partners, their links, customers, conversions, commissions and paid payouts from another platform, in their original currency. Runs in the background (follow it with GET); a rerun finds what an earlier one brought and changes nothing. Imported history sends no e-mails and no webhooks.',
      body: CreateImportBody,
      responses: { 202: ImportEnvelope, ...jsonBodyErrorResponses, 403: errorResponses[403], 404: errorResponses[404] },
    },
    list: {
      method: 'GET',
      path: '/api/imports',
      summary: 'List imports',
      description: 'Imports, newest first, with cursor pagination.',
      query: PageQuery,
      responses: {
        200: z.object({
          success: z.literal(true),
          data: z.object({ imports: z.array(Import), next_cursor: NextCursor }),
        }),
        400: errorResponses[400],
      },
    },
    get: {
      method: 'GET',
      path: '/api/imports/:id',
      summary: 'Get an import',
      description: 'One import: its status, progress, counts and skipped rows.',
      pathParams: idParam,
      responses: { 200: ImportEnvelope, 403: errorResponses[403], 404: errorResponses[404] },
    },
    remove: {
      method: 'DELETE',
      path: '/api/imports/:id',
      summary: 'Undo an import',
      description:
        'Deletes every row the import created, in one transaction, while nothing has been built on them (no conversion, payout or approval on its rows since). Otherwise 409, naming what holds it. A running import answers 409 too: cancel it first (POST /api/imports/{id}/cancel); an import already undone answers 409. The import itself stays listed, `undone`, with its counts.',
      pathParams: idParam,
      body: c.noBody(),
      responses: { 200: ImportEnvelope, 403: errorResponses[403], 404: errorResponses[404], 409: errorResponses[409] },
    },
    cancel: {
      method: 'POST',
      path: '/api/imports/:id/cancel',
      summary: 'Cancel an import',
      description:
        'Stops a running import (queued, importing, or waiting to try its source again): it becomes `cancelled` at once, and its job stops before the next page, the page it was writing rolled back, so its counts are exactly what it wrote. What it wrote stays; `DELETE /api/imports/{id}` undoes it. Its credentials are erased. An import that has already ended answers 409.',
      pathParams: idParam,
      body: c.noBody(),
      responses: {
        200: ImportEnvelope,
        ...jsonBodyErrorResponses,
        403: errorResponses[403],
        404: errorResponses[404],
        409: errorResponses[409],
      },
    },
  }),
);

export type Import = z.infer<typeof Import>;
export type ImportTerms = z.infer<typeof ImportTerms>;
export type ImportTermsChoice = z.infer<typeof ImportTermsChoice>;
export type ImportSource = z.infer<typeof ImportSource>;
export type ImportKind = z.infer<typeof ImportKind>;
export type CreateImportBody = z.infer<typeof CreateImportBody>;
