/**
 * True in a browser page, a web worker or React Native: places where an API key would be
 * readable by anyone. Deno, Bun, Node (which has `navigator` since v21) and edge runtimes are not.
 */
export function isBrowserLike(): boolean {
  const g = globalThis as {
    window?: { document?: unknown } | null;
    importScripts?: unknown;
    WorkerGlobalScope?: unknown;
    navigator?: { product?: unknown };
  };
  if (typeof g.window === 'object' && g.window !== null && typeof g.window.document === 'object') return true;
  if (typeof g.importScripts === 'function' && typeof g.WorkerGlobalScope !== 'undefined') return true;
  return typeof g.navigator === 'object' && g.navigator?.product === 'ReactNative';
}
