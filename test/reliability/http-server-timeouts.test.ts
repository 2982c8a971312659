import type { Server } from 'node:http';
import pino from 'pino';
import { afterAll, describe, expect, it } from 'vitest';
import { createHttpServer } from '../../server/src/http/http-server.js';

/** The timeouts of the HTTP server main.ts creates (createHttpServer), read back from the server itself. */
describe('HTTP server timeouts', () => {
  // Node keeps the createServer option connectionsCheckingInterval on the server; @types/node does not declare it.
  const server = createHttpServer((_req, res) => res.end(), pino({ level: 'silent' })) as Server & {
    connectionsCheckingInterval: number;
  };
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it('applies headersTimeout before requestTimeout, checks both often enough to matter, and outlasts a load balancer idle timeout', () => {
    // A client trickling its headers is cut at headersTimeout; were it the longer, requestTimeout would always fire first.
    expect(server.headersTimeout).toBeGreaterThan(0);
    expect(server.headersTimeout).toBeLessThan(server.requestTimeout);
    // Node enforces both only every connectionsCheckingInterval (default 30 s, longer than headersTimeout itself).
    expect(server.connectionsCheckingInterval).toBeLessThan(server.headersTimeout / 5);
    // An idle keep-alive connection is closed by the balancer first (AWS's ALB: 60 s by default), never under a request it sends.
    expect(server.keepAliveTimeout).toBeGreaterThan(60_000);
  });
});
