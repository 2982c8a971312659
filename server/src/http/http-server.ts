import type { Server } from 'node:http';
import type { Socket } from 'node:net';
import type { Logger } from 'pino';

const STATUS_TEXT: Record<number, string> = { 400: 'Bad Request', 408: 'Request Timeout', 413: 'Payload Too Large', 431: 'Request Header Fields Too Large' };

/**
 * Node answers some malformed requests itself, before Express sees them (header section over
 * 16 KiB, a broken request line, a client too slow to send its headers), and by default with an
 * empty body. These answer the error envelope like every other error.
 */
export function configureHttpServer(server: Server, logger: Logger): void {
  server.keepAliveTimeout = 65_000; // above the usual load balancer idle timeout (60 s)
  server.headersTimeout = 66_000;
  server.requestTimeout = 60_000;
  server.on('clientError', (err: NodeJS.ErrnoException & { bytesParsed?: number }, socket: Socket) => {
    if (err.code === 'ECONNRESET' || !socket.writable) {
      socket.destroy();
      return;
    }
    const status =
      err.code === 'HPE_HEADER_OVERFLOW' ? 431 : err.code === 'ERR_HTTP_REQUEST_TIMEOUT' || err.code === 'HPE_HEADERS_TIMEOUT' ? 408 : 400;
    const message =
      status === 431 ? 'Request headers (URL included) exceed the 16 KiB limit' : status === 408 ? 'Request timed out' : 'Malformed HTTP request';
    logger.debug({ code: err.code }, 'client error answered by the HTTP server');
    const body = JSON.stringify({ success: false, message });
    socket.end(
      `HTTP/1.1 ${status} ${STATUS_TEXT[status]}\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    );
  });
}
