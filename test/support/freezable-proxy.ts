import { once } from 'node:events';
import { connect, createServer, type Server, type Socket } from 'node:net';

/** One client connection through the proxy and its upstream twin. */
interface Pipe {
  client: Socket;
  upstream: Socket;
  /** Bytes received while frozen, per direction, delivered in order on thaw (as a stopped process's socket buffers would be). */
  held: { toUpstream: Buffer[]; toClient: Buffer[] };
  /** Lost for good: nothing is forwarded on this pipe again, in either direction. */
  blackholed: boolean;
}

export interface FreezableProxy {
  port: number;
  /** `databaseUrl` with its host and port replaced by the proxy's. */
  urlFor(databaseUrl: string): string;
  /**
   * PostgreSQL "freezes" (SIGSTOP, a stalled disk, a VM paused, a partition that drops packets
   * without resetting): connections stay open and new ones are accepted, but no byte moves.
   */
  freeze(): void;
  /** Resumes forwarding; bytes held during the freeze are delivered first (SIGCONT). */
  thaw(): void;
  /**
   * Every connection open now is lost for good (its packets dropped, no reset: a failover or an
   * expired NAT entry), while new connections work normally.
   */
  blackholeExisting(): void;
  /** Connections accepted so far (each becomes one upstream connection). */
  readonly accepted: number;
  close(): Promise<void>;
}

/**
 * A TCP proxy between the service and PostgreSQL that the test can freeze, so that the service
 * meets a database that stops answering without closing anything. The machine's PostgreSQL is
 * shared with other test runs, so it is never stopped itself: only the bytes through this proxy are.
 */
export async function startFreezableProxy(targetHost: string, targetPort: number): Promise<FreezableProxy> {
  const pipes = new Set<Pipe>();
  let frozen = false;
  let accepted = 0;

  const forward = (pipe: Pipe, chunk: Buffer, to: 'toUpstream' | 'toClient') => {
    if (pipe.blackholed) return;
    if (frozen) {
      pipe.held[to].push(chunk);
      return;
    }
    (to === 'toUpstream' ? pipe.upstream : pipe.client).write(chunk);
  };

  const server: Server = createServer((client) => {
    accepted++;
    const upstream = connect(targetPort, targetHost);
    const pipe: Pipe = { client, upstream, held: { toUpstream: [], toClient: [] }, blackholed: false };
    pipes.add(pipe);
    const drop = () => {
      client.destroy();
      upstream.destroy();
      pipes.delete(pipe);
    };
    // A close on one side is forwarded as a close on the other, except while frozen or lost: a
    // frozen server sends no FIN either. The pipe is then dropped when the test thaws or closes.
    const closeFrom = () => {
      if (!frozen && !pipe.blackholed) drop();
    };
    client.on('error', drop).on('close', closeFrom);
    upstream.on('error', drop).on('close', closeFrom);
    client.on('data', (chunk: Buffer) => forward(pipe, chunk, 'toUpstream'));
    upstream.on('data', (chunk: Buffer) => forward(pipe, chunk, 'toClient'));
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const port = (server.address() as { port: number }).port;

  return {
    port,
    get accepted() {
      return accepted;
    },
    urlFor(databaseUrl: string) {
      const url = new URL(databaseUrl);
      url.hostname = '127.0.0.1';
      url.port = String(port);
      return url.toString();
    },
    freeze() {
      frozen = true;
    },
    thaw() {
      frozen = false;
      for (const pipe of pipes) {
        if (pipe.blackholed) continue;
        for (const chunk of pipe.held.toUpstream.splice(0)) pipe.upstream.write(chunk);
        for (const chunk of pipe.held.toClient.splice(0)) pipe.client.write(chunk);
        // A side that closed during the freeze is closed now on the other side too.
        if (pipe.client.destroyed || pipe.upstream.destroyed) {
          pipe.client.destroy();
          pipe.upstream.destroy();
          pipes.delete(pipe);
        }
      }
    },
    blackholeExisting() {
      for (const pipe of pipes) {
        pipe.blackholed = true;
        pipe.held = { toUpstream: [], toClient: [] };
      }
    },
    async close() {
      for (const pipe of pipes) {
        pipe.client.destroy();
        pipe.upstream.destroy();
      }
      pipes.clear();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
