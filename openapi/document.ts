import { readFileSync } from 'node:fs';
import { type AppRoute, type AppRouter } from '@ts-rest/core';
import { generateOpenApi } from '@ts-rest/open-api';
import {
  OpenApiBuilder,
  type OpenAPIObject,
  type OperationObject,
  type ParameterObject,
  type PathItemObject,
  type RequestBodyObject,
  type ResponseObject,
  type SchemaObject,
  type ServerObject,
} from 'openapi3-ts/oas30';
import { z } from 'zod';
import { contract, merchantContract, RETRY_AFTER_STATUSES } from '@affiliate-attribution/contract';
import { EXAMPLE_CASES, exampleFor, singular, type ExampleCase, type ExampleContext } from './examples.js';
import { OpenApiSchemaValidator, pointerSegment } from './validator.js';
import { SECURITY_SCHEMES, SECURITY, tagFor, collectRoutes, operationIdOf, securityKindOf } from './routes.js';
import { normalizeSchemas, ComponentRegistry } from './schemas.js';
import { RETRY_AFTER_HEADER, successDescription, errorMessageFor } from './responses.js';
/**
 * Builds the OpenAPI 3.0 document of the service from the ts-rest contract. Nothing here lists
 * paths or fields: ts-rest's generator turns each route's zod schemas into JSON schemas, and this
 * module assembles the document around them (operation ids, tags, security, shared components,
 * examples). Every response, error statuses included, is the contract's. The output is
 * deterministic: same contract, same bytes.
 */

export const OPENAPI_VERSION = '3.0.3';

export interface BuildOptions {
  /** `servers` of the document; default: a local instance. */
  servers?: ServerObject[];
}

/**
 * An absolute URL, so that a client generated from the committed file has a base URL that works
 * out of the box: the local instance `npm start` serves (PORT's default, 3000; document.test.ts
 * holds the two equal). A relative `/` would leave generators (openapi-generator, hey-api) with
 * none. 127.0.0.1 rather than localhost: the service listens on IPv4 (HOST 0.0.0.0), and a client
 * that resolves localhost to ::1 first would find nothing there. The running service serves the
 * document at `/openapi.json` with its own base URL (`PUBLIC_BASE_URL`, else the origin of the
 * request) and the legacy host instead (server/src/http/docs.ts); `npm run openapi --
 * --server-url … --legacy-server-url …` writes one for given hosts.
 */
export const DEFAULT_SERVERS: ServerObject[] = [
  {
    url: 'http://127.0.0.1:3000',
    description:
      'A local instance (`npm start`). A deployment serves this document at `{base_url}/openapi.json` with its own base URL here. Paths carry no version segment.',
  },
];

/**
 * Who answers for the API. A placeholder until the project has a public home (a repository's
 * issue tracker or a support address): `.example` is a reserved domain, so nobody mistakes it
 * for a real mailbox. Replace it with the project's own contact.
 */
export const CONTACT = {
  name: 'Affiliate Attribution Service maintainers',
  email: 'support@affiliate-attribution.example',
} as const;

/**
 * The project's licence, from the root package.json (an SPDX id, the one place it is declared).
 * OpenAPI 3.0 has no `identifier` (3.1 does): the SPDX id is the name, the SPDX page the URL.
 */
function licenseOf(): { name: string; url: string } {
  const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { license?: string };
  if (!pkg.license || pkg.license === 'UNLICENSED')
    throw new Error('The root package.json declares no licence (`license`, an SPDX id); the document states it.');
  return { name: pkg.license, url: `https://spdx.org/licenses/${encodeURIComponent(pkg.license)}.html` };
}

/**
 * Request content types a route accepts beyond the JSON ts-rest declares, from the route's
 * `metadata.requestContentTypes` (the tracking endpoints also take `text/plain`: the snippet's
 * JSON sent without a CORS preflight).
 */
function requestContentTypesOf(route: AppRoute): string[] | undefined {
  const types = (route.metadata as { requestContentTypes?: readonly string[] } | undefined)?.requestContentTypes;
  return types ? [...types] : undefined;
}

/** `text/plain` (and other text types) carry the JSON as text: the body is a string to a validator. */
function isJsonMediaType(type: string): boolean {
  return /^application\/(.+\+)?json$/.test(type);
}

/**
 * A media type object's example(s): one case, or none, gives `example`; several give named
 * `examples` (OpenAPI 3.0 allows one or the other), each with its summary.
 */
function exampleFields(
  cases: Record<string, ExampleCase> | undefined,
  derive: (c: ExampleCase | undefined) => unknown,
): { example?: unknown; examples?: Record<string, { summary: string; value: unknown }> } {
  const entries = Object.entries(cases ?? {});
  if (entries.length === 0) return { example: derive(undefined) };
  if (entries.length === 1) return { example: derive(entries[0][1]) };
  return { examples: Object.fromEntries(entries.map(([name, c]) => [name, { summary: c.summary, value: derive(c) }])) };
}

/** The API's version is the contract package's. */
const contractVersion = (
  JSON.parse(readFileSync(new URL('../contract/package.json', import.meta.url), 'utf8')) as { version: string }
).version;

function sortObject<T>(obj: Record<string, T>, compare?: (a: string, b: string) => number): Record<string, T> {
  return Object.fromEntries(
    Object.entries(obj).sort(([a], [b]) => (compare ? compare(a, b) : a < b ? -1 : a > b ? 1 : 0)),
  );
}

const METHOD_ORDER = ['get', 'put', 'post', 'patch', 'delete'];

const DESCRIPTION = `Affiliate attribution service: report clicks, customers and conversions so that the right affiliate is credited, including on recurring charges.

**Integration methods** (they combine): the tracking snippet, served at \`{base_url}/snippet.js\` and embedded with the organization id in its \`data-organization\` attribute, captures \`?ref=<slug>\` into the first-party cookie \`svc_aff\`; this REST API is called server to server with the organization API key; payment providers post their events to \`/webhooks/{provider}/{organizationId}\`.

**Authentication**: every \`/api/*\` request carries the organization API key in the \`Authorization\` header, as \`svc-<key>\` or \`Bearer svc-<key>\`. A missing or invalid key answers 401 \`{ "success": false, "message": "Missing or invalid API key" }\`; a record of another organization answers 403. A few routes also refuse a dashboard \`member\`'s session (the team, API keys, integrations, tax form review, sending payouts, imports) or a test key (\`svc_test_…\`: the account's team, invitations and API keys); their 403 says which, with its message.

**Envelopes**: success is \`{ "success": true, "data": { "<resource>": { ... } } }\`; lists add \`next_cursor\` (pass it as \`cursor\`; null on the last page). Every error, whatever its status, is \`{ "success": false, "message": "<human readable>" }\` (the \`ErrorBody\` schema). JSON field names are snake_case; timestamps are ISO-8601 in UTC; \`amount\` is a decimal in major units (49.99).

**Idempotency**: customers are idempotent on \`customer_id\`, conversions on \`external_id\`, affiliates on (e-mail, program). A repeat answers 200 with the existing record and \`"deduped": true\`; a creation answers 201 with \`"deduped": false\`. Retrying a write after a timeout, a 500 or a 503 is therefore safe.

**Attribution**: a first sale is attributed by click (\`cookie_id\`, \`ref\` or \`click_id\`); later charges by \`customer_id\` alone are \`recurring\` and reuse the customer's affiliate and program. Identifiers not issued by the service for this organization answer 404 "No attribution found"; a click older than the program's click window answers 410.`;

/** The OpenAPI document of everything `contract` holds. */
/** Examples of the responses that are not JSON, by content type. */
const OTHER_CONTENT_EXAMPLES: Record<string, string> = {
  'text/csv':
    'payout_id,affiliate_id,program_id,name,payout_email,amount,currency,commission_count,status,reference,created_at,paid_at\n' +
    '0b7d4c3e-5f1a-4d2b-9c8e-7a6b5c4d3e2f,11111111-1111-4111-8111-111111111111,22222222-2222-4222-8222-222222222222,Jane Doe,jane@example.com,100.50,USD,3,pending,,2026-11-01T00:00:00.000Z,\n',
};

export function buildOpenApiDocument(options: BuildOptions = {}): OpenAPIObject {
  const routes = collectRoutes(contract);
  const merchantRoutes = new Set(
    collectRoutes(merchantContract as unknown as AppRouter).map((r) => `${r.route.method} ${r.route.path}`),
  );
  const generated = normalizeSchemas(
    generateOpenApi(contract, { info: { title: 'x', version: '0' } }, { setOperationId: 'concatenated-path' }),
  );
  const registry = new ComponentRegistry();

  const builder = OpenApiBuilder.create({ openapi: OPENAPI_VERSION, info: { title: '', version: '' }, paths: {} })
    .addTitle('Affiliate Attribution API')
    .addVersion(contractVersion)
    .addDescription(DESCRIPTION);
  builder.addLicense(licenseOf()).addContact({ ...CONTACT });
  for (const server of options.servers ?? DEFAULT_SERVERS) builder.addServer(server);
  for (const [name, scheme] of Object.entries(SECURITY_SCHEMES)) builder.addSecurityScheme(name, { ...scheme });
  builder.addHeader('RetryAfter', { ...RETRY_AFTER_HEADER });

  const tagKeys: string[] = [];
  const paths: Record<string, PathItemObject> = {};
  const operationIds = new Map<string, string>();
  const mediaWithExamples: string[] = [];

  for (const entry of routes) {
    const { route, keyPath, oasPath, method } = entry;
    const raw = (generated.paths[oasPath] as PathItemObject | undefined)?.[method];
    if (!raw) throw new Error(`ts-rest generated no operation for ${route.method} ${route.path}`);
    const operationId = operationIdOf(keyPath);
    const clash = operationIds.get(operationId);
    if (clash)
      throw new Error(`operationId ${operationId} of ${route.method} ${route.path} is already used by ${clash}`);
    operationIds.set(operationId, `${route.method} ${route.path}`);
    if (!tagKeys.includes(keyPath[0])) tagKeys.push(keyPath[0]);
    const tag = tagFor(keyPath[0], routes).name;
    const security = securityKindOf(route, merchantRoutes);
    const resource = singular(keyPath[0]);
    const pointerBase = `#/paths/${pointerSegment(oasPath)}/${method}`;
    const exampleCtx = (kind: ExampleContext['kind'], extra: Partial<ExampleContext> = {}): ExampleContext => ({
      kind,
      entity: resource,
      components: Object.fromEntries(registry.used),
      ...extra,
    });

    // OpenAPI ignores header parameters named Accept, Content-Type and Authorization; credentials
    // are security schemes, and the webhook's basic auth is described in its description.
    const parameters: ParameterObject[] = ((raw.parameters ?? []) as ParameterObject[])
      .filter((p) => !(p.in === 'header' && ['accept', 'content-type', 'authorization'].includes(p.name.toLowerCase())))
      .map((p) => {
        const param: ParameterObject = { ...p };
        if (!param.description)
          param.description =
            (p.schema as SchemaObject | undefined)?.description ??
            `The \`${p.name}\` ${p.in === 'path' ? 'path segment' : 'parameter'}.`;
        const schema = (p.schema ?? { type: 'string' }) as SchemaObject;
        param.schema = schema;
        param.example = exampleFor(schema, p.name, exampleCtx('request'));
        return param;
      });

    const cases = EXAMPLE_CASES[operationId];
    let requestBody: RequestBodyObject | undefined;
    let requestSchemaResolved: SchemaObject | undefined;
    if (raw.requestBody) {
      const rb = raw.requestBody as RequestBodyObject;
      const [contentType, media] = Object.entries(rb.content)[0];
      const bodyZod = route.method !== 'GET' && 'body' in route ? route.body : undefined;
      // A body the contract lets clients leave out (`.optional()`, or `.default({})`: the handler
      // then sees `{}`) is not required; that is what `required: false` says, so the `default`
      // zod puts on the schema of the whole body (not a field) is left out.
      const required = bodyZod instanceof z.ZodType ? !bodyZod.isOptional() : true;
      const withoutDefault: SchemaObject = { ...((media.schema ?? {}) as SchemaObject) };
      delete withoutDefault.default;
      const resolvedSchema: SchemaObject = required ? ((media.schema ?? {}) as SchemaObject) : withoutDefault;
      requestSchemaResolved = resolvedSchema;
      const schema = registry.factor(resolvedSchema, 'input');
      const requestExample = (c: ExampleCase | undefined): unknown =>
        c?.request ?? exampleFor(resolvedSchema, undefined, exampleCtx('request'));
      const content: RequestBodyObject['content'] = {};
      for (const type of requestContentTypesOf(route) ?? [contentType]) {
        if (isJsonMediaType(type)) {
          content[type] = { schema, ...exampleFields(cases, requestExample) };
        } else {
          // The same JSON, as text: to a validator (Prism, a generated client) the body is a string.
          const ref =
            '$ref' in schema
              ? `\`${schema.$ref.replace('#/components/schemas/', '')}\``
              : 'the `application/json` schema';
          content[type] = {
            schema: { type: 'string', description: `JSON text of ${ref}, exactly as with \`application/json\`.` },
            ...exampleFields(cases, (c) => JSON.stringify(requestExample(c))),
          };
        }
        mediaWithExamples.push(`${pointerBase}/requestBody/content/${pointerSegment(type)}`);
      }
      requestBody = {
        description:
          resolvedSchema.description ?? `The ${resource} to ${route.method === 'PATCH' ? 'change' : 'send'}.`,
        required,
        content,
      };
    }

    // The contract's responses: every status, errors included, is declared there.
    const responses: Record<string, ResponseObject> = {};
    const rawResponses = raw.responses as Record<string, ResponseObject>;
    const statuses = Object.keys(rawResponses).map(Number);

    for (const status of [...statuses].sort((a, b) => a - b)) {
      const rawResponse = rawResponses[String(status)];
      const media = rawResponse.content?.['application/json'];
      const resolved = media?.schema as SchemaObject | undefined;
      const isError = status >= 400;
      const hasDeduped = Boolean(resolved?.properties && 'deduped' in resolved.properties);
      const zodDescription = rawResponse.description !== String(status) ? rawResponse.description : undefined;
      const description =
        zodDescription ?? (isError ? `Error ${status}.` : successDescription(status, hasDeduped, statuses));
      const response: ResponseObject = { description };
      if (resolved) {
        const schema = registry.factor(resolved, 'output');
        const ctx = exampleCtx('response', {
          status,
          repeat: status === 200 && hasDeduped && statuses.includes(201),
          message: isError ? errorMessageFor(status, entry, requestSchemaResolved, security) : undefined,
        });
        // A case shows its records in the success responses; errors keep one example.
        const examples = exampleFields(isError ? undefined : cases, (c) =>
          exampleFor(resolved, undefined, { ...ctx, records: c?.records }),
        );
        response.content = { 'application/json': { schema, ...examples } };
        mediaWithExamples.push(`${pointerBase}/responses/${status}/content/application~1json`);
      } else if (rawResponse.content) {
        response.content = rawResponse.content;
      } else {
        // A response that is not JSON (c.otherResponse: a CSV file) is text of its content type.
        const other = (route.responses as Record<number, unknown>)[status] as { contentType?: string } | undefined;
        // A document download (a tax form: a PDF or an image, its own Content-Type) is binary.
        if (other?.contentType === 'application/octet-stream')
          response.content = { [other.contentType]: { schema: { type: 'string', format: 'binary' } } };
        else if (other?.contentType)
          response.content = {
            [other.contentType]: { schema: { type: 'string' }, example: OTHER_CONTENT_EXAMPLES[other.contentType] },
          };
      }
      if (RETRY_AFTER_STATUSES.includes(status))
        response.headers = { 'Retry-After': { $ref: '#/components/headers/RetryAfter' } };
      responses[String(status)] = response;
    }

    const operation: OperationObject = {
      operationId,
      summary: route.summary ?? `${route.method} ${route.path}`,
      description: route.description ?? route.summary ?? `${route.method} ${route.path}`,
      tags: [tag],
      security: SECURITY[security],
      ...(route.deprecated ? { deprecated: true } : {}),
      ...(parameters.length > 0 ? { parameters } : {}),
      ...(requestBody ? { requestBody } : {}),
      responses,
    };
    paths[oasPath] = { ...paths[oasPath], [method]: operation };
  }

  // A case of an operation that is gone or renamed would silently show nothing.
  const unknownCases = Object.keys(EXAMPLE_CASES).filter((id) => !operationIds.has(id));
  if (unknownCases.length > 0)
    throw new Error(`openapi/examples.ts has cases for operations the contract lacks: ${unknownCases.join(', ')}`);

  for (const key of tagKeys) builder.addTag(tagFor(key, routes));
  for (const [path, item] of Object.entries(sortObject(paths))) {
    builder.addPath(
      path,
      sortObject(item as Record<string, unknown>, (a, b) => METHOD_ORDER.indexOf(a) - METHOD_ORDER.indexOf(b)),
    );
  }
  for (const [name, schema] of Object.entries(sortObject(Object.fromEntries(registry.used))))
    builder.addSchema(name, schema);

  const doc = builder.getSpec();
  assertExamplesValid(doc, mediaWithExamples);
  return doc;
}

/** Every example in the document satisfies its schema; the build fails otherwise. */
function assertExamplesValid(doc: OpenAPIObject, mediaPointers: string[]): void {
  const validator = new OpenApiSchemaValidator(doc);
  const problems: string[] = [];
  for (const pointer of mediaPointers) {
    const media = validator.at(pointer) as { example?: unknown; examples?: Record<string, { value: unknown }> };
    const values: [string, unknown][] = media.examples
      ? Object.entries(media.examples).map(([name, e]) => [`${pointer}/examples/${pointerSegment(name)}`, e.value])
      : [[pointer, media.example]];
    for (const [where, value] of values) {
      const errors = validator.validate(`${pointer}/schema`, value);
      if (errors.length > 0) problems.push(`${where}: ${OpenApiSchemaValidator.describe(errors)}`);
    }
  }
  for (const [path, item] of Object.entries(doc.paths ?? {})) {
    for (const [method, op] of Object.entries(item as Record<string, OperationObject>)) {
      ((op.parameters ?? []) as ParameterObject[]).forEach((p, i) => {
        const pointer = `#/paths/${pointerSegment(path)}/${method}/parameters/${i}/schema`;
        const errors = validator.validate(pointer, p.example);
        if (errors.length > 0) problems.push(`${pointer}: ${OpenApiSchemaValidator.describe(errors)}`);
      });
    }
  }
  if (problems.length > 0) {
    throw new Error(
      `Generated examples do not match their schemas (add a realistic value in openapi/examples.ts):\n${problems.join('\n')}`,
    );
  }
}

/** The document as committed: two-space JSON, keys in the order built above, trailing newline. */
export function serializeDocument(doc: OpenAPIObject): string {
  return `${JSON.stringify(doc, null, 2)}\n`;
}
