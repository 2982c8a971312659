import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../server/src/config.js';
import { DATABASE_URL_ENCODING_RULE, databaseUrlProblem } from '../../server/src/db/database-url.js';
import { AWKWARD_PASSWORD, urlWithPassword } from '../reliability/support/own-cluster.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
/** A password written into the URL as it is, unencoded. */
const raw = (password: string) => `postgres://affiliates:${password}@127.0.0.1:5432/affiliates`;

describe('DATABASE_URL is checked as the drivers read it (db/database-url.ts)', () => {
  it('a password percent-encoded with encodeURIComponent passes, whatever its characters; so do the usual forms', () => {
    expect(databaseUrlProblem(urlWithPassword(5432, AWKWARD_PASSWORD))).toBeUndefined();
    expect(databaseUrlProblem('postgres://affiliates:change-me@127.0.0.1:5432/affiliates')).toBeUndefined();
    expect(databaseUrlProblem('postgresql://db.internal/affiliates?sslmode=require')).toBeUndefined();
    // A WHATWG URL takes the last @ as the end of the credentials: the drivers read p@ss right.
    expect(databaseUrlProblem(raw('p@ss'))).toBeUndefined();
  });

  it.each([
    ['12#ab', 'contains # (a fragment), which cuts the URL short: a # in the password'],
    ['p#ss', 'is not a valid URL'],
    ['#', 'contains # (a fragment), which cuts the URL short: a # in the password'],
    ['12?ab', 'names no database (the /database after the host): a / or ? in the password moves it'],
    ['12/ab', 'has a database name with / or @ in it (the host moved into the path): a / in the password'],
    ['ab/cd', 'is not a valid URL'],
    ['50%off', 'has a password that is not valid percent-encoding (a % not followed by two hex digits)'],
  ])('the password %s written unencoded: "%s", with the rule', (password, problem) => {
    expect(databaseUrlProblem(raw(password))).toBe(`${problem}: ${DATABASE_URL_ENCODING_RULE}`);
  });

  it("other faults: another scheme, no database; no host is the drivers' default (PGHOST, else localhost)", () => {
    expect(databaseUrlProblem('mysql://u:p@h/db')).toBe(
      `must start with postgres:// or postgresql:// (not mysql://): ${DATABASE_URL_ENCODING_RULE}`,
    );
    expect(databaseUrlProblem('postgres:///affiliates')).toBeUndefined();
    expect(databaseUrlProblem('postgres://u:p@h:5432')).toBe(
      `names no database (the /database after the host): a / or ? in the password moves it: ${DATABASE_URL_ENCODING_RULE}`,
    );
  });

  it('loadConfig names the setting (DATABASE_URL, DATABASE_DIRECT_URL, each DATABASE_REPLICA_URLS entry) and never repeats the password', () => {
    expect(() => loadConfig({ DATABASE_URL: raw('12#secret') })).toThrow(
      `Invalid configuration: DATABASE_URL: contains # (a fragment), which cuts the URL short: a # in the password: ${DATABASE_URL_ENCODING_RULE}`,
    );
    expect(() => loadConfig({ DATABASE_URL: raw('ok'), DATABASE_DIRECT_URL: raw('50%secret') })).toThrow(
      /^Invalid configuration: DATABASE_DIRECT_URL: has a password that is not valid/,
    );
    expect(() =>
      loadConfig({ DATABASE_URL: raw('ok'), DATABASE_REPLICA_URLS: `${raw('ok')},${raw('12/secret')}` }),
    ).toThrow(/^Invalid configuration: DATABASE_REPLICA_URLS\.1: has a database name with \/ or @ in it/);
    for (const value of [raw('12#secret'), raw('12/secret'), raw('50%secret')]) {
      let message = '';
      try {
        loadConfig({ DATABASE_URL: value });
      } catch (err) {
        message = String(err);
      }
      expect(message).toContain('DATABASE_URL');
      expect(message).not.toContain('secret');
    }
  });
});

/** Starts the service as `npm run dev` does, to its exit: what it wrote. */
async function startWith(databaseUrl: string): Promise<{ code: number | null; output: string }> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'server/src/main.ts'], {
    cwd: ROOT,
    env: {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? '',
      PORT: '0',
      HOST: '127.0.0.1',
      PUBLIC_BASE_URL: 'http://127.0.0.1',
      DATABASE_URL: databaseUrl,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
  const [code] = (await once(child, 'exit')) as [number | null];
  clearTimeout(timer);
  return { code, output };
}

describe('the service started with an unencoded password in DATABASE_URL', () => {
  it.each([
    ['12#secret', 'contains # (a fragment), which cuts the URL short: a # in the password'],
    ['50%secret', 'has a password that is not valid percent-encoding (a % not followed by two hex digits)'],
  ])(
    "%s: stops at once naming DATABASE_URL and the rule, never with the driver's error",
    { timeout: 90_000 },
    async (password, problem) => {
      const { code, output } = await startWith(raw(password));
      expect(code).toBe(1);
      expect(output).toContain(`Invalid configuration: DATABASE_URL: ${problem}: ${DATABASE_URL_ENCODING_RULE}`);
      expect(output).not.toMatch(/No database specified|URI malformed/);
      expect(output).not.toContain('secret@');
    },
  );
});
