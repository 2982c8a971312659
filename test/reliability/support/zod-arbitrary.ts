import fc from 'fast-check';
import type { ZodTypeAny } from 'zod';

/**
 * fast-check arbitraries derived from the contract's zod schemas: values that are mostly the right
 * shape (so requests reach the services and their rules), each field at times replaced by a
 * hostile value (wrong type, huge, odd unicode, null, prototype keys), fields dropped, keys added.
 */
export interface FuzzContext {
  /** Strings that mean something to the service (ids, slugs, cookie ids of the fuzzing organization). */
  knownStrings: string[];
}

const HUGE = 'x'.repeat(300_000);

export function hostileValue(): fc.Arbitrary<unknown> {
  return fc.oneof(
    fc.constant(null),
    fc.boolean(),
    fc.integer(),
    fc.double(), // NaN and infinities become null in JSON
    // eslint-disable-next-line no-loss-of-precision -- on purpose: a number JSON cannot carry exactly
    fc.constantFrom(1e308, -1e308, 2 ** 53 + 1, -0, 0.1 + 0.2, 1e-320, 123456789012345678901234567890),
    fc.string({ unit: 'binary', maxLength: 40 }), // any code point, lone surrogates included
    fc.string({ unit: 'grapheme', maxLength: 40 }),
    fc.constantFrom(
      '',
      ' ',
      '\u0000',
      '\u202e\u0041',
      '💸'.repeat(300),
      'é'.repeat(2000),
      "'; drop table conversions; --",
      '%00',
      '../../etc/passwd',
      '__proto__',
    ),
    fc.constant(HUGE),
    fc.array(fc.jsonValue({ maxDepth: 2 }), { maxLength: 4 }),
    fc.dictionary(fc.string({ maxLength: 8 }), fc.jsonValue({ maxDepth: 2 }), { maxKeys: 4 }),
    fc.constant({ __proto__: { admin: true } }),
  );
}

function def(schema: ZodTypeAny): any {
  return (schema as unknown as { _def: any })._def;
}

function stringArbitrary(schema: ZodTypeAny, ctx: FuzzContext): fc.Arbitrary<string> {
  const checks: { kind: string; value?: number; regex?: RegExp }[] = def(schema).checks ?? [];
  const kinds = new Set(checks.map((c) => c.kind));
  const known = fc.constantFrom(...ctx.knownStrings);
  let generated: fc.Arbitrary<string>;
  if (kinds.has('uuid')) generated = fc.uuid();
  else if (kinds.has('email')) generated = fc.emailAddress();
  else if (kinds.has('datetime'))
    generated = fc
      .date({ min: new Date('2000-01-01'), max: new Date(Date.now() + 3_600_000), noInvalidDate: true })
      .map((d) => d.toISOString());
  else if (kinds.has('regex')) generated = fc.stringMatching(checks.find((c) => c.kind === 'regex')!.regex!);
  else {
    const max = checks.find((c) => c.kind === 'max')?.value ?? 64;
    // Free-form identifiers: mostly the ones the service issued, so that requests resolve.
    return fc.oneof(
      { weight: 3, arbitrary: known },
      { weight: 1, arbitrary: fc.string({ minLength: 1, maxLength: Math.min(max, 64) }) },
    );
  }
  return fc.oneof({ weight: 1, arbitrary: known }, { weight: 2, arbitrary: generated });
}

/** A value of the schema's shape, with hostile values mixed in at every level. */
export function arbitraryFor(schema: ZodTypeAny, ctx: FuzzContext, depth = 0): fc.Arbitrary<unknown> {
  const d = def(schema);
  const hostile = hostileValue();
  const wellTyped = ((): fc.Arbitrary<unknown> => {
    switch (d.typeName) {
      case 'ZodObject': {
        const shape: Record<string, ZodTypeAny> = d.shape();
        const fields = Object.entries(shape).map(([key, field]) => {
          const optional = field.isOptional();
          return fc.oneof(
            { weight: optional ? 1 : 1, arbitrary: fc.constant(undefined) },
            {
              weight: optional ? 1 : 14,
              arbitrary: arbitraryFor(field, ctx, depth + 1).map((value) => [key, value] as const),
            },
          );
        });
        const extra = fc.oneof(
          { weight: 4, arbitrary: fc.constant(undefined) },
          {
            weight: 1,
            arbitrary: fc.tuple(fc.constantFrom('extra', 'constructor', '__proto__', 'organization_id', 'id'), hostile),
          },
        );
        return fc.tuple(fc.tuple(...fields), extra).map(([entries, added]) => {
          const out: Record<string, unknown> = {};
          for (const entry of entries) if (entry) out[entry[0]] = entry[1];
          if (added)
            Object.defineProperty(out, added[0], {
              value: added[1],
              enumerable: true,
              configurable: true,
              writable: true,
            });
          return out;
        });
      }
      case 'ZodString':
        return stringArbitrary(schema, ctx);
      case 'ZodNumber': {
        const isInt = (d.checks ?? []).some((c: { kind: string }) => c.kind === 'int');
        const min: number | undefined = (d.checks ?? []).find((c: { kind: string }) => c.kind === 'min')?.value;
        const low = min ?? -5;
        return isInt
          ? fc.oneof(
              { weight: 4, arbitrary: fc.integer({ min: Math.max(low, -5), max: 100 }) },
              { weight: 1, arbitrary: fc.integer({ min: -5, max: 5000 }) },
            )
          : fc.oneof(
              { weight: 4, arbitrary: fc.double({ min: Math.max(low, -10), max: 1e6, noNaN: true }) },
              { weight: 2, arbitrary: fc.integer({ min: 0, max: 1000 }) },
              { weight: 1, arbitrary: fc.double({ min: -10, max: 10, noNaN: true }) },
            );
      }
      case 'ZodBoolean':
        return fc.boolean();
      case 'ZodEnum':
        return fc.constantFrom(...(d.values as string[]));
      case 'ZodNativeEnum':
        return fc.constantFrom(...Object.values(d.values as Record<string, string>));
      case 'ZodLiteral':
        return fc.constant(d.value);
      case 'ZodOptional':
      case 'ZodNullable':
      case 'ZodDefault':
      case 'ZodReadonly':
      case 'ZodCatch':
        return arbitraryFor(d.innerType, ctx, depth);
      case 'ZodEffects':
        return arbitraryFor(d.schema, ctx, depth);
      case 'ZodArray':
        return depth > 3 ? fc.constant([]) : fc.array(arbitraryFor(d.type, ctx, depth + 1), { maxLength: 3 });
      case 'ZodRecord':
        return fc.dictionary(fc.string({ maxLength: 12 }), fc.jsonValue({ maxDepth: 2 }), { maxKeys: 5 });
      case 'ZodUnion':
      case 'ZodDiscriminatedUnion': {
        const options: ZodTypeAny[] = Array.isArray(d.options) ? d.options : [...d.options.values()];
        return fc.oneof(...options.map((o) => arbitraryFor(o, ctx, depth)));
      }
      case 'ZodNull':
        return fc.constant(null);
      default:
        return fc.jsonValue({ maxDepth: 2 });
    }
  })();
  // Most values well typed, so that requests get past validation and exercise the rules.
  return fc.oneof({ weight: 12, arbitrary: wellTyped }, { weight: 1, arbitrary: hostile });
}
