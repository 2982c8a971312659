/**
 * Attempts in flight per endpoint, so that one slow or hanging endpoint cannot hold every slot of
 * its delivering process (the other merchants' events would wait behind its timeouts): at most
 * `concurrency` attempts to one endpoint at once; the others wait their turn here, in order,
 * without holding one of the process's slots.
 */
export class EndpointSlots {
  private readonly byEndpoint = new Map<string, { active: number; waiting: (() => void)[] }>();

  constructor(private readonly concurrency: number) {}

  async run<T>(endpointId: string, task: () => Promise<T>): Promise<T> {
    let slot = this.byEndpoint.get(endpointId);
    if (!slot) {
      slot = { active: 0, waiting: [] };
      this.byEndpoint.set(endpointId, slot);
    }
    if (slot.active < this.concurrency) slot.active++;
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
