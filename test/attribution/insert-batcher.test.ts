import { describe, expect, it } from 'vitest';
import { InsertBatcher } from '../../server/src/db/batched-insert.js';

/** A write function that records each statement's rows and answers them after `release()`. */
function recordingWrite(fail?: (rows: string[]) => Error | undefined) {
  const statements: string[][] = [];
  const waiting: (() => void)[] = [];
  let inFlight = 0;
  let maxInFlight = 0;
  const write = (rows: string[]) =>
    new Promise<string[]>((resolve, reject) => {
      statements.push(rows);
      inFlight++;
      maxInFlight = Math.max(maxInFlight, inFlight);
      waiting.push(() => {
        inFlight--;
        const error = fail?.(rows);
        if (error) reject(error);
        else resolve(rows.map((row) => `stored ${row}`));
      });
    });
  /** Answers every statement in flight, then lets the batcher send what waits (two turns of the loop). */
  const release = async () => {
    while (waiting.length > 0) waiting.shift()!();
    for (let turn = 0; turn < 2; turn++) await new Promise((r) => setImmediate(r));
  };
  return { write, statements, release, maxInFlight: () => maxInFlight };
}

describe('InsertBatcher (db/batched-insert.ts)', () => {
  it('sends the rows added in one turn of the event loop as one statement, each caller getting its own result', async () => {
    const w = recordingWrite();
    const batcher = new InsertBatcher(w.write, { maxRows: 10, maxInFlight: 2 });
    const results = ['a', 'b', 'c'].map((row) => batcher.add(row));
    await new Promise((r) => setImmediate(r));
    expect(w.statements).toEqual([['a', 'b', 'c']]);
    await w.release();
    expect(await Promise.all(results)).toEqual(['stored a', 'stored b', 'stored c']);
  });

  it('holds at most maxInFlight statements of at most maxRows; later rows go in the next statement', async () => {
    const w = recordingWrite();
    const batcher = new InsertBatcher(w.write, { maxRows: 2, maxInFlight: 2 });
    const results = ['a', 'b', 'c', 'd', 'e', 'f', 'g'].map((row) => batcher.add(row));
    await new Promise((r) => setImmediate(r));
    expect(w.statements).toEqual([
      ['a', 'b'],
      ['c', 'd'],
    ]);
    await w.release();
    // e and f fill a statement; g alone waits for it rather than going beside it
    expect(w.statements).toEqual([
      ['a', 'b'],
      ['c', 'd'],
      ['e', 'f'],
    ]);
    await w.release();
    expect(w.statements).toEqual([['a', 'b'], ['c', 'd'], ['e', 'f'], ['g']]);
    await w.release();
    expect(w.maxInFlight()).toBe(2);
    expect(await Promise.all(results)).toHaveLength(7);
  });

  it('beside a statement in flight, sends another only for a full one: rows that arrive meanwhile wait and leave together', async () => {
    const w = recordingWrite();
    const batcher = new InsertBatcher(w.write, { maxRows: 4, maxInFlight: 4 });
    const results = [batcher.add('a')];
    await new Promise((r) => setImmediate(r));
    expect(w.statements).toEqual([['a']]);
    // three rows arrive in later turns while 'a' is in flight: not a full statement, they wait
    for (const row of ['b', 'c', 'd']) {
      results.push(batcher.add(row));
      await new Promise((r) => setImmediate(r));
    }
    expect(w.statements).toEqual([['a']]);
    // a fourth makes a full statement's worth: it goes beside the one in flight
    results.push(batcher.add('e'));
    await new Promise((r) => setImmediate(r));
    expect(w.statements).toEqual([['a'], ['b', 'c', 'd', 'e']]);
    results.push(batcher.add('f'));
    await w.release();
    expect(w.statements).toEqual([['a'], ['b', 'c', 'd', 'e'], ['f']]);
    await w.release();
    expect(await Promise.all(results)).toEqual([
      'stored a',
      'stored b',
      'stored c',
      'stored d',
      'stored e',
      'stored f',
    ]);
    expect(w.maxInFlight()).toBe(2);
  });

  it('never puts two rows with the same exclusive key in one statement', async () => {
    const w = recordingWrite();
    const batcher = new InsertBatcher(w.write, { maxRows: 10, maxInFlight: 1, exclusiveKey: (row: string) => row[0] });
    const results = ['x1', 'y1', 'x2', 'x3', 'y2'].map((row) => batcher.add(row));
    await new Promise((r) => setImmediate(r));
    expect(w.statements).toEqual([['x1', 'y1']]);
    await w.release();
    expect(w.statements[1]).toEqual(['x2', 'y2']);
    await w.release();
    expect(w.statements[2]).toEqual(['x3']);
    await w.release();
    expect(await Promise.all(results)).toEqual(['stored x1', 'stored y1', 'stored x2', 'stored x3', 'stored y2']);
  });

  it("puts only one group's rows (one organization's) in a statement, the first waiting row's group first", async () => {
    const w = recordingWrite();
    const batcher = new InsertBatcher(w.write, { maxRows: 10, maxInFlight: 1, groupKey: (row: string) => row[0] });
    const results = ['a1', 'b1', 'a2', 'b2', 'a3'].map((row) => batcher.add(row));
    await new Promise((r) => setImmediate(r));
    expect(w.statements).toEqual([['a1', 'a2', 'a3']]);
    await w.release();
    expect(w.statements[1]).toEqual(['b1', 'b2']);
    await w.release();
    expect(await Promise.all(results)).toEqual(['stored a1', 'stored b1', 'stored a2', 'stored b2', 'stored a3']);
  });

  it('after a failed statement, writes its rows one by one: only the bad row fails', async () => {
    const w = recordingWrite((rows) => (rows.includes('bad') ? new Error('check constraint violated') : undefined));
    const batcher = new InsertBatcher(w.write, { maxRows: 10, maxInFlight: 4 });
    const results = ['a', 'bad', 'b'].map((row) =>
      batcher.add(row).then(
        (r) => r,
        (e: Error) => e.message,
      ),
    );
    await new Promise((r) => setImmediate(r));
    await w.release();
    await w.release();
    expect(await Promise.all(results)).toEqual(['stored a', 'check constraint violated', 'stored b']);
    expect(w.statements).toEqual([['a', 'bad', 'b'], ['a'], ['bad'], ['b']]);
  });

  it('when the database is unavailable, fails every row of the statement at once (no retry storm)', async () => {
    const down = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });
    const w = recordingWrite(() => down);
    const batcher = new InsertBatcher(w.write, { maxRows: 10, maxInFlight: 4 });
    const results = ['a', 'b'].map((row) =>
      batcher.add(row).then(
        (r) => r,
        (e: Error) => e,
      ),
    );
    await new Promise((r) => setImmediate(r));
    await w.release();
    expect(await Promise.all(results)).toEqual([down, down]);
    expect(w.statements).toEqual([['a', 'b']]);
  });
});
