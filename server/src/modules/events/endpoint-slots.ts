/**
 * Attempts in flight per endpoint, so that one slow or hanging endpoint cannot hold every slot of
 * its delivering process (the other merchants' events would wait behind its timeouts): at most
 * `concurrency` attempts to one endpoint at once, and at most `queue` more waiting; beyond that an
 * attempt is not taken at all (`run` answers `undefined`), and delivery defers it to the job queue.
 */
export class EndpointSlots {
  private readonly byEndpoint = new Map<string, { active: number; waiting: (() => void)[] }>();

  constructor(
    private readonly concurrency: number,
    private readonly queue: number,
  ) {}

  async run<T>(endpointId: string, task: () => Promise<T>): Promise<T | undefined> {
    let slot = this.byEndpoint.get(endpointId);
    if (!slot) {
      slot = { active: 0, waiting: [] };
      this.byEndpoint.set(endpointId, slot);
    }
    if (slot.active < this.concurrency) slot.active++;
    else if (slot.waiting.length >= this.queue) return undefined;
    // A released slot is handed over directly: `active` stays as it is.
    else await new Promise<void>((resolve) => slot.waiting.push(resolve));
    try {
      return await task();
    } finally {
      const next = slot.waiting.shift();
      if (next) next();
      else if (--slot.active === 0) this.byEndpoint.delete(endpointId);
    }
  }
}
