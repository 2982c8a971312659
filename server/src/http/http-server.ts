import { createServer, type RequestListener, type Server } from 'node:http';
import type { Socket } from 'node:net';
import type { Logger } from 'pino';

/**
 * How long Node waits on a client, in ms. Only idle keep-alive sockets are subject to
 * keepAliveTimeout; a request being received is subject to headersTimeout until its headers are
 * complete and to requestTimeout until its body is: so headersTimeout must be the shorter, or a
 * client trickling its headers (slowloris) holds the socket for the full requestTimeout.
 */
export const HTTP_TIMEOUTS = {
  /** Above the usual load balancer idle timeout (60 s), so that the balancer, not us, closes an idle connection it might be reusing. */
  keepAliveTimeout: 65_000,
  /** A header section is at most 16 KiB: seconds even on a poor mobile link. */
  headersTimeout: 20_000,
  /** Headers and a body of up to 1 MiB. */
  requestTimeout: 60_000,
  /** How often Node checks the two above (default 30 s, which would let either run up to 30 s late). */
  connectionsCheckingInterval: 2_000,
} as const;

/** The service's HTTP server (main.ts): the timeouts above, and error envelopes for what Node answers itself. */
export function createHttpServer(listener: RequestListener, logger: Logger): Server {
  // As options, so that Node itself refuses a headersTimeout above requestTimeout.
  const server = createServer(HTTP_TIMEOUTS, listener);
  configureHttpServer(server, logger);
  return server;
}

const STATUS_TEXT: Record<number, string> = {
  400: 'Bad Request',
  408: 'Request Timeout',
  413: 'Payload Too Large',
  431: 'Request Header Fields Too Large',
};

/**
 * Node answers some malformed requests itself, before Express sees them (header section over
 * 16 KiB, a broken request line, a client too slow to send its headers), and by default with an
 * empty body. These answer the error envelope like every other error.
 */
export function configureHttpServer(server: Server, logger: Logger): void {
  server.keepAliveTimeout = HTTP_TIMEOUTS.keepAliveTimeout;
  server.headersTimeout = HTTP_TIMEOUTS.headersTimeout;
  server.requestTimeout = HTTP_TIMEOUTS.requestTimeout;
  server.on('clientError', (err: NodeJS.ErrnoException & { bytesParsed?: number }, socket: Socket) => {
    if (err.code === 'ECONNRESET' || !socket.writable) {
      socket.destroy();
      return;
    }
    const status =
      err.code === 'HPE_HEADER_OVERFLOW'
        ? 431
        : err.code === 'ERR_HTTP_REQUEST_TIMEOUT' || err.code === 'HPE_HEADERS_TIMEOUT'
          ? 408
          : 400;
    const message =
      status === 431
        ? 'Request headers (URL included) exceed the 16 KiB limit'
        : status === 408
          ? 'Request timed out'
          : 'Malformed HTTP request';
    logger.debug({ code: err.code }, 'client error answered by the HTTP server');
    const body = JSON.stringify({ success: false, message });
    socket.end(
      `HTTP/1.1 ${status} ${STATUS_TEXT[status]}\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    );
  });
}
