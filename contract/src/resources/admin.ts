import { initContract } from '@ts-rest/core';
import { z } from 'zod';
import { errorResponses, jsonBodyErrorResponses } from '../common/errors.js';
import { Mode, Timestamp, Uuid } from '../common/primitives.js';
import { Organization } from './me.js';

const c = initContract();

export const ApiKeyInfo = z
  .object({
    id: Uuid.describe('Key id, used to revoke it.'),
    redacted: z
      .string()
      .describe(
        'Display form of the key, e.g. `svc-AbCd…wXyZ` or `svc_test_AbCd…wXyZ`; the plain key is never shown again.',
      ),
    mode: Mode.describe(
      '`live`: the key reads and writes live data; `test` (plain text begins `svc_test_`): test data only.',
    ),
    created_at: Timestamp,
    revoked_at: Timestamp.nullable().describe('When the key was revoked; null while it is valid.'),
  })
  .describe('API key (without its secret)');

const IssuedKey = {
  api_key: z
    .string()
    .describe(
      'The plain API key (`svc-…` for a live key, `svc_test_…` for a test key). Shown in this response only; store it now.',
    ),
  api_key_info: ApiKeyInfo,
};

/** The body of a key issue: which mode the key is for. Optional: no body issues a live key. */
export const IssueApiKeyBody = z.object({
  mode: Mode.default('live').describe(
    '`test` issues a test key (`svc_test_…`), which reads and writes only test data; default `live`.',
  ),
});

/** A deletion in batches by a job (an organization's, or a test organization's data) and how far it has got. */
export const DataDeletion = z
  .object({
    id: Uuid.describe('Deletion id.'),
    organization_id: Uuid.describe(
      'The organization deleted (its live id), or the test organization whose data is deleted.',
    ),
    status: z
      .enum(['queued', 'running', 'completed', 'failed'])
      .describe(
        '`queued`: recorded, the job has not started; `running`: rows are being deleted, table by table, in batches; `completed`: nothing of it is left; `failed`: the job gave up after its retries (ask for the deletion again: it goes on where it stopped).',
      ),
    phase: z.string().nullable().describe('The table being deleted from while running; null before and after.'),
    deleted: z
      .record(z.string(), z.number().int())
      .describe(
        'Rows deleted so far, by table (every table the deletion deletes from, 0 until reached); final once `completed`.',
      ),
    error: z.string().nullable().describe('Why it failed; null otherwise.'),
    requested_at: Timestamp,
    started_at: Timestamp.nullable().describe('When the job first started; null while queued.'),
    finished_at: Timestamp.nullable().describe('When it completed or failed; null before.'),
  })
  .describe('A data deletion and its progress');

const OrgIdParam = z.object({ id: z.string().describe('Organization id.') });

export const adminContract = c.router(
  {
    createOrganization: {
      method: 'POST',
      path: '/admin/organizations',
      summary: 'Create an organization (operator)',
      description:
        'Creates an organization with its first live API key (`api_key`) and its first test key (`test_api_key`, `svc_test_…`): start with the test key, whose data (`livemode: false`) live keys never see. Requires the operator token (`ADMIN_TOKEN`).',
      body: z.object({ name: z.string().min(1).max(200).describe('Organization name.') }),
      responses: {
        201: z.object({
          success: z.literal(true),
          data: z.object({
            organization: Organization,
            ...IssuedKey,
            test_api_key: z
              .string()
              .describe(
                'The plain test API key (`svc_test_…`): reads and writes test data only. Shown in this response only; store it now.',
              ),
            test_api_key_info: ApiKeyInfo,
          }),
        }),
        ...jsonBodyErrorResponses,
      },
    },
    issueApiKey: {
      method: 'POST',
      path: '/admin/organizations/:id/api-keys',
      summary: 'Issue an additional API key (operator)',
      description:
        'Issues a new key for rotation: deploy the new key, then revoke the old one. Body `{ "mode": "test" }` issues a test key (`svc_test_…`); without a body, or with `{ "mode": "live" }`, a live key.',
      pathParams: OrgIdParam,
      body: IssueApiKeyBody.optional(),
      responses: {
        201: z.object({ success: z.literal(true), data: z.object(IssuedKey) }),
        ...jsonBodyErrorResponses,
        404: errorResponses[404],
      },
    },
    listApiKeys: {
      method: 'GET',
      path: '/admin/organizations/:id/api-keys',
      summary: 'List the API keys of an organization (operator)',
      description: 'Lists the keys of both modes in redacted form, each with its `mode`, revoked ones included.',
      pathParams: OrgIdParam,
      responses: {
        200: z.object({ success: z.literal(true), data: z.object({ api_keys: z.array(ApiKeyInfo) }) }),
        404: errorResponses[404],
      },
    },
    deleteOrganization: {
      method: 'DELETE',
      path: '/admin/organizations/:id',
      summary: 'Delete an organization and everything it owns (operator)',
      description:
        'Deletes the organization, its test data and every row it owns (programs, affiliates, clicks, customers, conversions, the ledger, payouts, webhook endpoints and events, people, API keys, integrations, reports). At once the organization is unusable: its API keys stop working on every instance, its dashboard and portal sessions end, and the operator routes answer 404 for it. The rows are then deleted by a job, table by table in small batches, without holding up any other organization: poll `GET /admin/organizations/{id}/deletion` until `status` is `completed`. Answers 202 with the deletion; asked again while it runs, answers the same deletion. Irreversible.',
      pathParams: OrgIdParam,
      body: c.noBody(),
      responses: {
        202: z.object({ success: z.literal(true), data: z.object({ deletion: DataDeletion }) }),
        404: errorResponses[404],
      },
    },
    getOrganizationDeletion: {
      method: 'GET',
      path: '/admin/organizations/:id/deletion',
      summary: 'Progress of an organization’s deletion (operator)',
      description:
        'The latest deletion asked for the organization, with the rows deleted so far by table; still answered once the organization is gone (`status: completed`). 404 when none was asked for.',
      pathParams: OrgIdParam,
      responses: {
        200: z.object({ success: z.literal(true), data: z.object({ deletion: DataDeletion }) }),
        404: errorResponses[404],
      },
    },
    revokeApiKey: {
      method: 'DELETE',
      path: '/admin/organizations/:id/api-keys/:keyId',
      summary: 'Revoke an API key (operator)',
      description: 'Revokes a key, live or test; it is refused everywhere within a few seconds.',
      pathParams: OrgIdParam.extend({ keyId: z.string().describe('Key id.') }),
      body: c.noBody(),
      responses: {
        200: z.object({ success: z.literal(true), data: z.object({ api_key_info: ApiKeyInfo }) }),
        404: errorResponses[404],
      },
    },
  },
  // The operator token, and the JSON body limit (any method may carry a body).
  {
    commonResponses: {
      401: errorResponses[401].describe('Missing or invalid operator token.'),
      413: errorResponses[413],
    },
  },
);

export type ApiKeyInfo = z.infer<typeof ApiKeyInfo>;
