import { generateOpenApi } from '@ts-rest/open-api';
import {
  type OperationObject,
  type ReferenceObject,
  type RequestBodyObject,
  type ResponseObject,
  type SchemaObject,
} from 'openapi3-ts/oas30';
import { z } from 'zod';
import * as contractModule from '@affiliate-attribution/contract';

/**
 * zod -> OpenAPI through ts-rest's own generator, and the named components the document shares.
 */

export type Schema = SchemaObject | ReferenceObject;

/** ts-rest's own zod conversion, reached through its public API with a one-route contract. */
export function zodToSchema(schema: z.ZodTypeAny, mode: 'input' | 'output'): SchemaObject {
  const route = { method: 'POST', path: '/x', body: schema, responses: { 200: schema } } as const;
  const doc = generateOpenApi({ x: route }, { info: { title: 'x', version: '0' } });
  const op = (doc.paths['/x'] as { post: OperationObject }).post;
  const raw =
    mode === 'input'
      ? (op.requestBody as RequestBodyObject).content['application/json'].schema
      : (op.responses['200'] as ResponseObject).content!['application/json'].schema;
  return normalizeSchemas(raw as SchemaObject);
}

/**
 * Fixes two spots where the zod conversion is not valid OpenAPI 3.0: `z.unknown()` comes out as
 * `{ nullable: true }` without a type (3.0 defines `nullable` only beside `type`): any value is `{}`;
 * `z.null()` comes out as a string of format "null": a value that can only be null is written as
 * `{ type: object, nullable: true, enum: [null] }`, the usual 3.0 idiom. And a nullable enum
 * (`z.enum([...]).nullable()`) lists null among its values: in 3.0 `enum` still restricts a
 * nullable schema, so without it null would be refused (OpenAPI 3.0.3, "nullable").
 */
export function normalizeSchemas<T>(node: T): T {
  if (Array.isArray(node)) return node.map(normalizeSchemas) as T;
  if (!node || typeof node !== 'object') return node;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(node)) out[key] = normalizeSchemas(value);
  if (out.format === 'null' && out.nullable === true) {
    const { format: _f, type: _t, ...rest } = out;
    return { type: 'object', ...rest, nullable: true, enum: [null] } as T;
  }
  if (out.nullable === true && Array.isArray(out.enum) && !out.enum.includes(null))
    out.enum = [...(out.enum as unknown[]), null];
  if (out.nullable === true && out.type === undefined && !out.allOf && !out.oneOf && !out.anyOf && !out.$ref)
    delete out.nullable;
  if (
    out.additionalProperties &&
    typeof out.additionalProperties === 'object' &&
    Object.keys(out.additionalProperties).length === 0
  ) {
    out.additionalProperties = true;
  }
  return out as T;
}

export function stableStringify(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(stableStringify).join(',')}]`;
  if (value && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${stableStringify(v)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

/** Identity of a schema for matching: its content, ignoring the description at its top. */
export function shapeKey(schema: SchemaObject): string {
  const { description: _description, ...rest } = schema;
  return stableStringify(rest);
}

export interface ComponentCandidate {
  name: string;
  schema: SchemaObject;
  key: string;
}

/**
 * Every object schema the contract package exports by name (Organization, Program, Customer,
 * Conversion, ErrorBody, request bodies, ...) is a candidate component; wherever the same schema
 * appears in an operation it becomes a `$ref`, so generated clients get named types and the error
 * envelope is one shared component. Candidates that no operation uses are not emitted.
 */
export function componentCandidates(mode: 'input' | 'output'): ComponentCandidate[] {
  const out: ComponentCandidate[] = [];
  const seen = new Set<string>();
  const names = Object.keys(contractModule).sort();
  for (const name of names) {
    const value = (contractModule as Record<string, unknown>)[name];
    if (!/^[A-Z]/.test(name) || !(value instanceof z.ZodObject)) continue;
    const schema = zodToSchema(value, mode);
    if (!schema.properties || Object.keys(schema.properties).length === 0) continue;
    const key = shapeKey(schema);
    if (seen.has(key)) continue;
    seen.add(key);
    out.push({ name, schema, key });
  }
  return out;
}

export class ComponentRegistry {
  readonly used = new Map<string, SchemaObject>();
  private readonly byKey: Record<'input' | 'output', Map<string, ComponentCandidate>>;

  constructor() {
    this.byKey = {
      input: new Map(componentCandidates('input').map((c) => [c.key, c])),
      output: new Map(componentCandidates('output').map((c) => [c.key, c])),
    };
  }

  /** `schema` with every subtree that is a named component replaced by its `$ref`. */
  factor(schema: Schema, mode: 'input' | 'output'): Schema {
    if ('$ref' in schema) return schema;
    const candidate = this.byKey[mode].get(shapeKey(schema));
    if (candidate) {
      const name = this.register(candidate, mode);
      return { $ref: `#/components/schemas/${name}` };
    }
    const out: SchemaObject = { ...schema };
    if (schema.properties) {
      out.properties = Object.fromEntries(Object.entries(schema.properties).map(([k, v]) => [k, this.factor(v, mode)]));
    }
    if (schema.items) out.items = this.factor(schema.items, mode);
    for (const key of ['allOf', 'oneOf', 'anyOf'] as const) {
      if (schema[key]) out[key] = schema[key].map((s) => this.factor(s, mode));
    }
    if (schema.additionalProperties && typeof schema.additionalProperties === 'object') {
      out.additionalProperties = this.factor(schema.additionalProperties, mode);
    }
    return out;
  }

  private register(candidate: ComponentCandidate, mode: 'input' | 'output'): string {
    let name = candidate.name;
    const existing = this.used.get(name);
    if (existing && shapeKey(existing) !== candidate.key)
      name = `${candidate.name}${mode === 'input' ? 'Input' : 'Output'}`;
    if (!this.used.has(name)) {
      this.used.set(name, candidate.schema);
      // Nested components are factored too (e.g. Organization inside another named object).
      this.used.set(name, this.factorInside(candidate.schema, mode));
    }
    return name;
  }

  private factorInside(schema: SchemaObject, mode: 'input' | 'output'): SchemaObject {
    const out: SchemaObject = { ...schema };
    if (schema.properties) {
      out.properties = Object.fromEntries(Object.entries(schema.properties).map(([k, v]) => [k, this.factor(v, mode)]));
    }
    if (schema.items) out.items = this.factor(schema.items, mode);
    return out;
  }
}
