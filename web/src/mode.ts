import { useSyncExternalStore } from 'react';

/**
 * The dashboard's mode: `live` (real partners, money and e-mails) or `test` (the organization's
 * test data, spec/test-mode.md). The one place the web app keeps it: api.ts sends `X-Mode: test`
 * on every /api request while it is `test`, and pages read it with `useMode()`.
 *
 * Kept in sessionStorage, not localStorage: it survives a reload of the tab, but each tab has its
 * own and a new tab opens in live mode. With localStorage a switch in one tab would change what the
 * next click of another tab (still showing live figures) acts on; per tab, what a page shows and
 * what it sends never disagree, and two tabs can show live and test side by side.
 */
export type Mode = 'live' | 'test';

const STORAGE_KEY = 'svc.dashboard-mode';
/** The request header that puts a dashboard session's request in test mode. */
export const MODE_HEADER = 'X-Mode';

const listeners = new Set<() => void>();

function read(): Mode {
  try {
    return sessionStorage.getItem(STORAGE_KEY) === 'test' ? 'test' : 'live';
  } catch {
    return 'live'; // storage refused (a privacy setting): live, the default
  }
}

let current: Mode = typeof sessionStorage === 'undefined' ? 'live' : read();

export function getMode(): Mode {
  return current;
}

export function isTestMode(): boolean {
  return current === 'test';
}

export function setMode(mode: Mode): void {
  if (mode === current) return;
  current = mode;
  try {
    if (mode === 'test') sessionStorage.setItem(STORAGE_KEY, 'test');
    else sessionStorage.removeItem(STORAGE_KEY);
  } catch {
    // not kept across reloads; the tab still switches
  }
  for (const listener of listeners) listener();
}

/** Called on every change of mode; returns the unsubscribe. */
export function subscribeMode(listener: () => void): () => void {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

/** The mode, re-rendering the component when it changes. */
export function useMode(): Mode {
  return useSyncExternalStore(subscribeMode, getMode, () => 'live');
}

/** The headers a request of the dashboard's API carries for the current mode (none in live mode). */
export function modeHeaders(): Record<string, string> {
  return current === 'test' ? { [MODE_HEADER]: 'test' } : {};
}
