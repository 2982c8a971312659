/**
 * The receiver of `npm run bench:events`, in a process of its own (as a merchant's is), so that
 * the load generator's event loop does not delay receipts: a plain node:http server on 127.0.0.1
 * that verifies every delivery with `standardwebhooks` (as a merchant's would) and notes when each
 * arrived. The parent (bench/events.ts) talks to it over IPC: `{ secret, port }` to start,
 * `reset` to forget what came so far, `report` for the receipts.
 */
import { createServer } from 'node:http';
import { Webhook } from 'standardwebhooks';

interface Receipt {
  at: number;
  /** conversion.created only: receipt time minus the conversion's created_at. */
  latencyMs?: number;
}

let verifier: Webhook | undefined;
let receipts: Receipt[] = [];
let webhookIds = new Set<string>();
let rejected = 0;

const server = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    const at = Date.now();
    const body = Buffer.concat(chunks).toString('utf8');
    try {
      verifier!.verify(body, req.headers as Record<string, string>);
    } catch {
      rejected++;
      res.writeHead(400).end();
      return;
    }
    const event = JSON.parse(body) as { type: string; data: { conversion?: { created_at: string } } };
    webhookIds.add(String(req.headers['webhook-id']));
    receipts.push({
      at,
      latencyMs: event.type === 'conversion.created' ? at - Date.parse(event.data.conversion!.created_at) : undefined,
    });
    res.writeHead(204).end();
  });
});

process.on('message', (message: { start?: { secret: string; port: number }; reset?: true; report?: true }) => {
  if (message.start) {
    verifier = new Webhook(message.start.secret);
    server.listen(message.start.port, '127.0.0.1', () => process.send!({ listening: true }));
  } else if (message.reset) {
    receipts = [];
    webhookIds = new Set();
    rejected = 0;
    process.send!({ reset: true });
  } else if (message.report) {
    process.send!({ report: { receipts, distinct: webhookIds.size, rejected } });
  }
});
process.on('disconnect', () => process.exit(0));
