import type { AppRoute } from '@ts-rest/core';
import { contract } from '@affiliate-attribution/contract';

export interface ContractRoute {
  /** e.g. `conversions.create` */
  name: string;
  route: AppRoute;
}

function isRoute(node: unknown): node is AppRoute {
  return typeof node === 'object' && node !== null && 'method' in node && 'path' in node && 'responses' in node;
}

/** Every route of the contract, found by walking the contract object (never a hand-kept list). */
export function contractRoutes(): ContractRoute[] {
  const routes: ContractRoute[] = [];
  const walk = (node: unknown, name: string[]): void => {
    if (isRoute(node)) {
      routes.push({ name: name.join('.'), route: node });
      return;
    }
    if (typeof node === 'object' && node !== null) {
      for (const [key, child] of Object.entries(node)) walk(child, [...name, key]);
    }
  };
  walk(contract, []);
  return routes;
}

/** The path with its `:params` replaced (each value URL-encoded). */
export function fillPath(path: string, params: Record<string, string>): string {
  return path.replace(/:([A-Za-z]+)/g, (_, name: string) => encodeURIComponent(params[name] ?? `missing-${name}`));
}

export function pathParamNames(path: string): string[] {
  return [...path.matchAll(/:([A-Za-z]+)/g)].map((m) => m[1]);
}
