import { readFileSync } from 'node:fs';
import type { OpenAPIObject, OperationObject, ResponseObject } from 'openapi3-ts/oas30';
import { OpenApiSchemaValidator, pointerSegment } from '../../openapi/validator.js';

/**
 * Holds every response the integration tests receive to openapi/openapi.json: the operation must
 * exist, the status must be one the document lists for it, and the body must match that status's
 * schema, with objects closed (a field the document does not describe fails too). request() in
 * api.ts calls it on every response, so the document and the server cannot drift apart silently.
 */

const DOCUMENT_URL = new URL('../../openapi/openapi.json', import.meta.url);

/**
 * Paths that are deliberately not API operations, so not in the document: the snippet script,
 * the docs page and the document itself, the operational probes and metrics.
 */
export const NOT_IN_DOCUMENT: RegExp[] = [
  /^\/snippet\.js$/,
  /^\/docs(\/.*)?$/,
  /^\/openapi\.json$/,
  /^\/health$/,
  /^\/ready$/,
  /^\/metrics$/,
];

const METHODS = ['get', 'put', 'post', 'patch', 'delete'] as const;

interface OperationMatch {
  path: string;
  method: string;
  operation: OperationObject;
}

export class ResponseValidator {
  private readonly validator: OpenApiSchemaValidator;
  private readonly routes: { regex: RegExp; params: number; path: string }[];

  constructor(private readonly document: OpenAPIObject) {
    this.validator = new OpenApiSchemaValidator(document, { closedObjects: true });
    this.routes = Object.keys(document.paths ?? {})
      .map((path) => ({
        path,
        params: (path.match(/\{[^}]+\}/g) ?? []).length,
        regex: new RegExp(`^${path.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\\?\{[^}]+\\?\}/g, '[^/]+')}$`),
      }))
      // Literal segments win over parameters: /api/conversions/export before /api/conversions/{id}.
      .sort((a, b) => a.params - b.params);
  }

  static fromFile(): ResponseValidator {
    return new ResponseValidator(JSON.parse(readFileSync(DOCUMENT_URL, 'utf8')) as OpenAPIObject);
  }

  match(method: string, pathname: string): OperationMatch | undefined {
    const m = method.toLowerCase();
    if (!(METHODS as readonly string[]).includes(m)) return undefined;
    for (const route of this.routes) {
      if (!route.regex.test(pathname)) continue;
      const operation = (this.document.paths[route.path] as Record<string, OperationObject | undefined>)[m];
      if (operation) return { path: route.path, method: m, operation };
    }
    return undefined;
  }

  /**
   * The problem with this response, or undefined when the document describes it. `body` is the
   * raw text of the response.
   */
  check(method: string, url: string, status: number, body: string, contentType: string | null): string | undefined {
    const upper = method.toUpperCase();
    // CORS preflights and HEAD are answered by the HTTP layer, not by operations.
    if (upper === 'OPTIONS' || upper === 'HEAD') return undefined;
    const pathname = new URL(url, 'http://localhost').pathname;
    if (NOT_IN_DOCUMENT.some((re) => re.test(pathname))) return undefined;
    const where = `${upper} ${pathname} -> ${status}`;
    const found = this.match(method, pathname);

    if (!found) {
      // No such operation: only an error is a truthful answer (unknown route, or a failure before
      // routing such as a missing API key). A success means the server has an undocumented route.
      if (status < 400)
        return `${where}: the server answered an operation that openapi/openapi.json does not describe (add it to the contract and run \`npm run openapi\`)`;
      return this.checkBody(where, '#/components/schemas/ErrorBody', body, contentType);
    }

    const id = found.operation.operationId ?? `${found.method} ${found.path}`;
    const responses = found.operation.responses as Record<string, ResponseObject>;
    const key = [String(status), `${String(status)[0]}XX`, 'default'].find((k) => responses[k]);
    if (!key) {
      return `${where}: status ${status} is not documented for operation ${id} (documented: ${Object.keys(responses).join(', ')})`;
    }
    const content = responses[key].content;
    if (!content || Object.keys(content).length === 0) {
      return body.length === 0
        ? undefined
        : `${where}: operation ${id} documents no body for ${key}, but the server sent one`;
    }
    if (!content['application/json']) return undefined;
    const pointer = `#/paths/${pointerSegment(found.path)}/${found.method}/responses/${key}/content/application~1json/schema`;
    return this.checkBody(`${where} (${id})`, pointer, body, contentType);
  }

  private checkBody(where: string, pointer: string, body: string, contentType: string | null): string | undefined {
    if (!contentType || !/^application\/(.+\+)?json\b/.test(contentType)) {
      return `${where}: expected a JSON body, got Content-Type ${contentType ?? '(none)'}`;
    }
    let parsed: unknown;
    try {
      parsed = JSON.parse(body);
    } catch {
      return `${where}: the body is not valid JSON: ${body.slice(0, 200)}`;
    }
    const errors = this.validator.validate(pointer, parsed);
    if (errors.length === 0) return undefined;
    return `${where}: the body does not match the document's schema: ${OpenApiSchemaValidator.describe(errors)}\nbody: ${body.slice(0, 500)}`;
  }
}

let shared: ResponseValidator | undefined;

/** Throws when openapi/openapi.json does not describe this response. */
export function assertDocumentedResponse(
  method: string,
  url: string,
  status: number,
  body: string,
  contentType: string | null,
): void {
  shared ??= ResponseValidator.fromFile();
  const problem = shared.check(method, url, status, body, contentType);
  if (problem) throw new Error(`OpenAPI response validation failed: ${problem}`);
}

/**
 * fetch that validates every response it returns (for clients that bring their own fetch, such
 * as the generated openapi-fetch client of the interop test).
 */
export async function validatingFetch(input: Request): Promise<Response> {
  const res = await fetch(input);
  const text = await res.clone().text();
  assertDocumentedResponse(input.method, input.url, res.status, text, res.headers.get('content-type'));
  return res;
}
