// autocannon ships no types; this is the part of its API the benchmark uses.
declare module 'autocannon' {
  interface Histogram {
    average: number;
    p50: number;
    p99: number;
  }
  interface Result {
    /** total: requests answered in the run. */
    requests: Histogram & { total: number };
    latency: Histogram;
    errors: number;
    timeouts: number;
    non2xx: number;
  }
  interface Options {
    url: string;
    connections?: number;
    duration?: number;
    requests?: Array<Record<string, unknown>>;
  }
  export default function autocannon(options: Options): Promise<Result>;
}
