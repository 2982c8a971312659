import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import type { OpenAPIObject } from 'openapi3-ts/oas30';

// ajv-formats is CommonJS; under NodeNext its default export is the module object.
const addFormats = ((addFormatsModule as unknown as { default?: typeof addFormatsModule }).default ??
  addFormatsModule) as unknown as (ajv: Ajv) => Ajv;

/** Keywords of OpenAPI 3.0 schema objects that are annotations, not JSON Schema assertions. */
const OPENAPI_ANNOTATIONS = ['example', 'xml', 'externalDocs', 'discriminator'];

export interface SchemaValidatorOptions {
  /**
   * Treat every object schema that lists its properties as closed (`additionalProperties: false`).
   * The document stays open so that clients tolerate new fields; the test suite validates closed
   * so that a field the server sends but the document does not describe fails a test.
   */
  closedObjects?: boolean;
}

function closeObjects(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(closeObjects);
  if (!node || typeof node !== 'object') return node;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(node)) out[key] = closeObjects(value);
  if (out.type === 'object' && out.properties && out.additionalProperties === undefined)
    out.additionalProperties = false;
  return out;
}

function rewriteRefs(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(rewriteRefs);
  if (!node || typeof node !== 'object') return node;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(node)) {
    out[key] =
      key === '$ref' && typeof value === 'string'
        ? value.replace('#/components/schemas/', `${'openapi-components'}#/definitions/`)
        : rewriteRefs(value);
  }
  return out;
}

/** JSON pointer escaping (RFC 6901) of one path segment. */
export function pointerSegment(segment: string): string {
  return segment.replace(/~/g, '~0').replace(/\//g, '~1');
}

/**
 * Validates values against schemas inside an OpenAPI 3.0 document, addressed by JSON pointer
 * (e.g. `#/paths/~1api~1me/get/responses/200/content/application~1json/schema`); `$ref`s between
 * components resolve as they do in the document.
 */
export class OpenApiSchemaValidator {
  private readonly ajv: Ajv;
  private readonly compiled = new Map<string, ValidateFunction>();
  private readonly document: OpenAPIObject;
  private static readonly COMPONENTS_ID = 'openapi-components';

  constructor(document: OpenAPIObject, options: SchemaValidatorOptions = {}) {
    this.ajv = new Ajv({ allErrors: true, strict: true, strictTypes: false, validateFormats: true });
    addFormats(this.ajv);
    this.ajv.addVocabulary(OPENAPI_ANNOTATIONS);
    this.document = (options.closedObjects ? closeObjects(document) : document) as OpenAPIObject;
    // The component schemas become `definitions` of one schema, and document refs point there.
    this.ajv.addSchema({
      $id: OpenApiSchemaValidator.COMPONENTS_ID,
      definitions: rewriteRefs(this.document.components?.schemas ?? {}),
    });
  }

  /** The node of the document at `pointer` (`#/paths/…`). */
  at(pointer: string): unknown {
    return pointer
      .replace(/^#\//, '')
      .split('/')
      .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'))
      .reduce<unknown>(
        (node, key) => (node && typeof node === 'object' ? (node as Record<string, unknown>)[key] : undefined),
        this.document,
      );
  }

  /** Errors of `value` against the schema at `pointer` (`#/…`), or an empty list when it is valid. */
  validate(pointer: string, value: unknown): ErrorObject[] {
    let fn = this.compiled.get(pointer);
    if (!fn) {
      const schema = this.at(pointer);
      if (!schema || typeof schema !== 'object') throw new Error(`No schema at ${pointer}`);
      fn = this.ajv.compile(rewriteRefs(schema) as object);
      this.compiled.set(pointer, fn);
    }
    return fn(value) ? [] : [...(fn.errors ?? [])];
  }

  static describe(errors: ErrorObject[]): string {
    return errors
      .slice(0, 8)
      .map((e) => {
        const where = e.instancePath || '(body)';
        const extra =
          e.keyword === 'additionalProperties'
            ? ` "${(e.params as { additionalProperty: string }).additionalProperty}"`
            : '';
        return `${where} ${e.message ?? e.keyword}${extra}`;
      })
      .join('; ');
  }
}
