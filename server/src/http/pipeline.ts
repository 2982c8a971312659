import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Express, RequestHandler } from 'express';
import type { OrganizationContext } from './organization-context.js';
import type { RequestLog } from './logging.js';

/**
 * The request pipeline's building blocks. The ordered list of stages is in stages.ts; both lanes
 * run it: Express mounts each stage as middleware (mountPipeline), the hot lane (hot-routes.ts)
 * runs the stages that concern its routes directly on node:http (stagesOf).
 */

/** What stages know of a request in either lane (Express's Request carries the same fields: request-context.ts). */
export interface PipelineRequest extends IncomingMessage {
  requestId: string;
  /** process.hrtime.bigint() when the pipeline took the request (the access log's and metrics' duration). */
  startedNs: bigint;
  log: RequestLog;
  organization?: OrganizationContext;
  apiKeyHash?: string;
  /** The parsed JSON body (the JSON body stage). */
  body?: unknown;
  /** Express's URL before mount paths are stripped; the hot lane leaves it unset (its `url` is whole). */
  originalUrl?: string;
  /** The route's pattern when the lane knows it before answering (the hot lane): the metrics' label. */
  routePattern?: string;
  /** False when a click route answered an earlier click of the same visit and wrote nothing (clicks_recorded_total skips it). */
  clickRecorded?: boolean;
}

/** Where a stage puts response headers: Express's response itself, or the hot lane's flat list. */
export interface HeaderSink {
  setHeader(name: string, value: string): unknown;
}

/**
 * One named step every request under `paths` goes through, in the order of the list.
 * - `run`, before the route: returns nothing when done, a promise only when it has to wait;
 *   throws (or rejects) to refuse the request, and the one error mapping answers (error-handler.ts).
 * - `answered`, once the answer is written (access log, metrics).
 * Keep both cheap: a stage costs every request it applies to, on the busiest routes too.
 */
export interface Stage {
  readonly name: string;
  /** Path prefixes it applies to (Express mount paths); every request when absent. */
  readonly paths?: readonly string[];
  /**
   * Whether it can do anything for a request in the hot lane's plain form (exact path, no query
   * string, a GET without a body or a UTF-8 JSON body of declared length) to `route`: the hot lane
   * leaves out those that cannot, decided once per route. Default: it can.
   */
  readonly needed?: (route: { method: string; path: string }) => boolean;
  /** The methods it applies to (a limit on sign-in POSTs, say); every method when absent. */
  readonly methods?: readonly string[];
  readonly run?: (req: PipelineRequest, res: ServerResponse, headers: HeaderSink) => void | Promise<void>;
  readonly answered?: (req: PipelineRequest, status: number) => void;
  /**
   * An Express middleware in place of run/answered, for a route group's own step (CORS of the
   * public endpoints, a partner's session): Express runs it, and no hot route may lie under its
   * paths (stagesOf refuses one), so both lanes still run the same list.
   */
  readonly express?: RequestHandler;
}

/** Where Express-only answers go in the list (operational endpoints, the static pages and documents): no hot route lies under them. */
export interface ExpressSlot {
  readonly slot: ExpressSlotName;
  /** Path prefixes whatever app.ts mounts in the slot answers; the hot lane checks its routes are outside them. */
  readonly paths: readonly string[];
}
export type ExpressSlotName = 'operational endpoints' | 'static surface';

export type PipelineStep = Stage | ExpressSlot;

const isSlot = (step: PipelineStep): step is ExpressSlot => 'slot' in step;

/** Whether `path` lies under one of `prefixes`, segment by segment, as Express mounts them (`:name` matches any one segment). */
export function under(path: string, prefixes: readonly string[] | undefined): boolean {
  if (prefixes === undefined) return true;
  const segments = path.split('/');
  return prefixes.some((prefix) => {
    const wanted = prefix.replace(/\/+$/, '').split('/');
    return (
      wanted.length <= segments.length &&
      wanted.every((segment, i) => (segment.startsWith(':') ? segments[i] !== '' : segment === segments[i]))
    );
  });
}

const appliesToMethod = (stage: Stage, method: string): boolean =>
  stage.methods === undefined || stage.methods.includes(method);

/** A stage as Express middleware: `answered` on the response's finish, `run` with the response as its header sink. */
export function expressMiddleware(stage: Stage): RequestHandler {
  const { run, answered } = stage;
  return (req, res, next) => {
    if (answered) res.once('finish', () => answered(req, res.statusCode));
    if (!run) {
      next();
      return;
    }
    let pending: void | Promise<void>;
    try {
      pending = run(req, res, res);
    } catch (err) {
      next(err);
      return;
    }
    if (pending === undefined) next();
    else pending.then(() => next(), next);
  };
}

/** A stage as Express mounts it: its middleware (or run/answered as one), for its methods only. */
function mountable(stage: Stage): RequestHandler {
  const handler = stage.express ?? expressMiddleware(stage);
  const { methods } = stage;
  return methods === undefined
    ? handler
    : (req, res, next) => (methods.includes(req.method) ? handler(req, res, next) : next());
}

/** Mounts the list on Express in its order: each stage under its paths, and what app.ts gives for each slot. */
export function mountPipeline(
  app: Express,
  steps: readonly PipelineStep[],
  slots: Record<ExpressSlotName, (app: Express) => void>,
): void {
  for (const step of steps) {
    if (isSlot(step)) slots[step.slot](app);
    else if (step.paths) app.use([...step.paths], mountable(step));
    else app.use(mountable(step));
  }
}

/**
 * The names of the stages Express runs for `method path`, in order, and the slot that answers it
 * if one does (then nothing after it runs): what every route group goes through, for tests and
 * for reading.
 */
export function expressStagesOf(
  steps: readonly PipelineStep[],
  method: string,
  path: string,
): { stages: string[]; slot?: ExpressSlotName } {
  const stages: string[] = [];
  for (const step of steps) {
    if (isSlot(step)) {
      if (under(path, step.paths)) return { stages, slot: step.slot };
    } else if (under(path, step.paths) && appliesToMethod(step, method)) {
      stages.push(step.name);
    }
  }
  return { stages };
}

/** The stages of `route` in the hot lane, in order: those under its path that it needs (see Stage.needed). */
export function stagesOf(steps: readonly PipelineStep[], route: { method: string; path: string }): HotStages {
  const stages: Stage[] = [];
  for (const step of steps) {
    if (isSlot(step)) {
      if (under(route.path, step.paths))
        throw new Error(
          `${route.method} ${route.path}: a hot route cannot lie under the Express-only ${step.slot} (${step.paths.join(', ')})`,
        );
    } else if (step.express && under(route.path, step.paths)) {
      throw new Error(
        `${route.method} ${route.path}: a hot route cannot lie under the Express-only stage ${step.name} (${(step.paths ?? ['every path']).join(', ')})`,
      );
    } else if (under(route.path, step.paths) && appliesToMethod(step, route.method) && step.needed?.(route) !== false) {
      stages.push(step);
    }
  }
  return {
    names: stages.map((stage) => stage.name),
    run: stages.flatMap((stage) => (stage.run ? [stage.run] : [])),
    answered: stages.flatMap((stage) => (stage.answered ? [stage.answered] : [])),
  };
}

export interface HotStages {
  names: string[];
  run: NonNullable<Stage['run']>[];
  answered: NonNullable<Stage['answered']>[];
}

/**
 * The hot lane's response headers: a flat [name, value, ...] list, written in one writeHead
 * (node:http's fast path: no per-header bookkeeping on the response).
 */
export class HeaderList implements HeaderSink {
  readonly flat: string[] = [];

  setHeader(name: string, value: string): void {
    this.flat.push(name, value);
  }

  has(name: string): boolean {
    for (let i = 0; i < this.flat.length; i += 2) if (this.flat[i] === name) return true;
    return false;
  }
}
