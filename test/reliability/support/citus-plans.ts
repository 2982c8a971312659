import pg from 'pg';

/**
 * The statements the service sends while a callback runs, recorded at the `pg` client (the
 * process's own server and ORM use it), and their plans on a Citus coordinator: a statement Citus
 * runs on one shard shows `Task Count: 1` in every distributed step of its EXPLAIN; one that runs
 * on several shows the number of shards it touches.
 */
export interface RecordedStatement {
  text: string;
  values: unknown[];
}

/** What carries no plan (transaction control, settings, locks taken by function calls are planned). */
const UNPLANNED =
  /^\s*(begin|commit|rollback|savepoint|release|set|reset|show|start transaction|prepare|deallocate|listen|unlisten|notify|discard)\b/i;

type Query = (this: pg.Client, ...args: unknown[]) => unknown;

/** Runs `action` and answers the planned statements sent meanwhile, in order. */
export async function recordStatements(action: () => Promise<unknown>): Promise<RecordedStatement[]> {
  const recorded: RecordedStatement[] = [];
  const prototype = pg.Client.prototype as unknown as { query: Query };
  const original = prototype.query;
  prototype.query = function (this: pg.Client, ...args: unknown[]) {
    const [first, second] = args;
    const config = (typeof first === 'object' && first !== null ? first : {}) as { text?: string; values?: unknown[] };
    const text = typeof first === 'string' ? first : config.text;
    const values = (Array.isArray(second) ? second : config.values) ?? [];
    if (typeof text === 'string' && !UNPLANNED.test(text)) recorded.push({ text, values });
    return original.apply(this, args);
  };
  try {
    await action();
  } finally {
    prototype.query = original;
  }
  return recorded;
}

export interface StatementPlan extends RecordedStatement {
  plan: string;
  /** Every `Task Count: N` of the plan. */
  taskCounts: number[];
}

/** EXPLAIN of each statement, with its own parameters, on a connection of its own to `url`. */
export async function plansOf(url: string, statements: readonly RecordedStatement[]): Promise<StatementPlan[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const plans: StatementPlan[] = [];
    for (const statement of statements) {
      const { rows } = await client.query<{ 'QUERY PLAN': string }>(
        `explain (costs off) ${statement.text}`,
        statement.values,
      );
      const plan = rows.map((r) => r['QUERY PLAN']).join('\n');
      const taskCounts = [...plan.matchAll(/Task Count: (\d+)/g)].map((m) => Number(m[1]));
      plans.push({ ...statement, plan, taskCounts });
    }
    return plans;
  } finally {
    await client.end();
  }
}

/** The statements of `plans` that Citus runs on more than one shard, for a failure's message. */
export function multiShard(plans: readonly StatementPlan[]): string[] {
  return plans
    .filter((p) => p.taskCounts.some((n) => n > 1))
    .map((p) => `${p.text.replace(/\s+/g, ' ').slice(0, 300)}\n${p.plan}`);
}
