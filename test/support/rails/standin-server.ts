import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/*
 * What every local provider stand-in (PayPal, Stripe transfers, Wise, Stripe Connect) shares:
 * an HTTP server on a free port of 127.0.0.1, each request's body read whole before it is
 * answered, JSON answers, and a stop that ends open connections. A stand-in extends it and
 * answers in `handle`, speaking its provider's API.
 */
export abstract class StandInServer {
  private server?: Server;
  baseUrl = '';

  async start(): Promise<this> {
    const server = createServer((req, res) => void this.receive(req, res));
    this.server = server;
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    this.baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    return this;
  }

  async stop(): Promise<void> {
    const server = this.server;
    if (!server) return;
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }

  /** Answers one request; `raw` is its whole body as UTF-8 text (empty when there is none). */
  protected abstract handle(req: IncomingMessage, res: ServerResponse, raw: string): Promise<void> | void;

  private async receive(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    await this.handle(req, res, Buffer.concat(chunks).toString('utf8'));
  }
}

/** Answers `body` as JSON with `status`; `headers` are added to (or override) the content type. */
export function sendJson(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(JSON.stringify(body));
}

/** A form-encoded body (`application/x-www-form-urlencoded`) as its fields, the last value of a repeated key winning. */
export function formFields(raw: string): Record<string, string> {
  return Object.fromEntries(new URLSearchParams(raw));
}

/** Stripe's `metadata[key]=value` form fields as `{ key: value }`. */
export function formMetadata(fields: Record<string, string>): Record<string, string> {
  return Object.fromEntries(
    Object.entries(fields).flatMap(([k, v]) => (k.startsWith('metadata[') ? [[k.slice(9, -1), v]] : [])),
  );
}
