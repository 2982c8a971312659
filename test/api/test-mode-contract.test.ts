import { describe, expect, it } from 'vitest';
import { isAppRoute, type AppRoute, type AppRouter } from '@ts-rest/core';
import { z, type ZodTypeAny } from 'zod';
import { contract } from '@affiliate-attribution/contract';

/**
 * `livemode` on every resource the API answers with (shared/spec/test-mode.md): every object of a
 * response that is a stored row of a mode (it has an `id` and a `created_at`) declares it, so a
 * resource added later cannot leave it out unnoticed. The server fills it in one place
 * (server/src/http/livemode.ts). The account's own records, the same in both modes (people, API
 * keys, which say their `mode`), and the operator's routes are not of a mode.
 */
const NOT_OF_A_MODE = new Set(['admin', 'adminPeople', 'account', 'people']);

function objectsOf(schema: ZodTypeAny, seen = new Set<ZodTypeAny>()): z.AnyZodObject[] {
  if (seen.has(schema)) return [];
  seen.add(schema);
  if (schema instanceof z.ZodObject)
    return [schema, ...Object.values(schema.shape as Record<string, ZodTypeAny>).flatMap((s) => objectsOf(s, seen))];
  if (schema instanceof z.ZodArray) return objectsOf(schema.element, seen);
  if (schema instanceof z.ZodOptional || schema instanceof z.ZodNullable) return objectsOf(schema.unwrap(), seen);
  if (schema instanceof z.ZodDefault) return objectsOf(schema._def.innerType, seen);
  if (schema instanceof z.ZodEffects) return objectsOf(schema.innerType(), seen);
  if (schema instanceof z.ZodRecord) return objectsOf(schema.valueSchema, seen);
  if (schema instanceof z.ZodUnion || schema instanceof z.ZodDiscriminatedUnion)
    return (schema.options as ZodTypeAny[]).flatMap((o) => objectsOf(o, seen));
  return [];
}

function routes(router: AppRouter, prefix = ''): [string, AppRoute][] {
  return Object.entries(router).flatMap(([name, value]) =>
    isAppRoute(value) ? [[`${prefix}${name}`, value] as [string, AppRoute]] : routes(value, `${prefix}${name}.`),
  );
}

describe('livemode in the contract', () => {
  it('every stored row a response carries declares livemode', () => {
    const missing: string[] = [];
    let checked = 0;
    for (const [name, route] of routes(contract)) {
      if (NOT_OF_A_MODE.has(name.split('.')[0])) continue;
      for (const [status, schema] of Object.entries(route.responses)) {
        if (!(schema instanceof z.ZodType) || Number(status) >= 300) continue;
        for (const object of objectsOf(schema)) {
          const keys = Object.keys(object.shape as object);
          if (!keys.includes('id') || !keys.includes('created_at')) continue;
          checked++;
          if (!keys.includes('livemode')) missing.push(`${name} ${status}: ${object.description ?? keys.join(',')}`);
        }
      }
    }
    expect(checked).toBeGreaterThan(20);
    expect(missing).toEqual([]);
  });
});
