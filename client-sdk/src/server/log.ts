/** Where the server helpers report what they could not do: `console`, pino, winston... all fit. */
export interface ServerLogger {
  warn(message: string, ...details: unknown[]): void;
}

export type Warn = (kind: string, message: string, error?: unknown) => void;

/** Kinds of problem the default logger has said since the service last answered (one process-wide set). */
const said = new Set<string>();

/**
 * A custom logger hears every event. The default, `console.warn`, says each kind of problem once
 * (until the service answers again): an outage must not write a line per page view.
 */
export function warner(logger: ServerLogger | undefined): { warn: Warn; recovered(): void } {
  if (logger) {
    return {
      warn: (_kind, message, error) => (error === undefined ? logger.warn(message) : logger.warn(message, error)),
      recovered: () => undefined,
    };
  }
  return {
    warn(kind, message, error) {
      if (said.has(kind)) return;
      said.add(kind);
      console.warn(`[affiliate-attribution] ${message}`, ...(error === undefined ? [] : [error]));
    },
    recovered: () => said.clear(),
  };
}
