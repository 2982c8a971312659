import { useEffect, useState } from 'react';
import { api, data } from '../api';
import { Empty, FormError, useConfirm, useSubmit } from '../ui';

/** What DELETE /api/test-data answers: rows deleted, by table, whether the deletion has finished, and why it failed. */
type Deleted = { counts: Record<string, number>; done: boolean; phase: string | null; error: string | null };

/**
 * In test mode (api.ts sends X-Mode: test); in live mode the service answers 403. A large reset
 * answers 202 while its job runs: the page then follows GET /api/test-data/deletion.
 */
const deleteTestData = async (): Promise<Deleted> => {
  const { deletion } = data(await api.testData.delete());
  return {
    counts: deletion.deleted,
    done: deletion.status === 'completed',
    phase: deletion.phase,
    error: deletion.error,
  };
};

const progressOf = async (): Promise<Deleted> => {
  const { deletion } = data(await api.testData.getDeletion());
  return {
    counts: deletion.deleted,
    done: deletion.status === 'completed' || deletion.status === 'failed',
    phase: deletion.phase,
    error: deletion.status === 'failed' ? (deletion.error ?? 'The deletion failed') : null,
  };
};

const tableName = (table: string) => table.replace(/_/g, ' ');

/**
 * "Delete all test data" (test mode only): every test row of the organization, after a
 * confirmation that says live data stays; then what was deleted, table by table.
 */
export function TestData() {
  const confirm = useConfirm();
  const [deleted, setDeleted] = useState<Deleted>();
  const reset = useSubmit(deleteTestData, setDeleted);
  useEffect(() => {
    if (!deleted || deleted.done) return;
    const timer = setTimeout(() => void progressOf().then(setDeleted, () => undefined), 1000);
    return () => clearTimeout(timer);
  }, [deleted]);
  async function ask() {
    const ok = await confirm({
      title: 'Delete all test data?',
      body: 'Every test program, affiliate, click, customer, conversion, commission and payout of this organization is deleted; test keys, integrations and webhook endpoints stay. Live data is untouched. This cannot be undone.',
      confirm: 'Delete all test data',
    });
    if (ok) await reset.submit();
  }
  const counts = deleted ? Object.entries(deleted.counts).filter(([, n]) => n > 0) : [];
  return (
    <section aria-labelledby="test-data-title">
      <h2 id="test-data-title">Test data</h2>
      <p>
        Start your tests again from nothing: delete the organization's test programs, partners, clicks, customers,
        sales, commissions and payouts. Test keys, integrations and webhook endpoints stay. Live data is untouched.
      </p>
      <button type="button" className="danger" onClick={() => void ask()} disabled={reset.busy}>
        Delete all test data
      </button>
      <FormError error={reset.error} />
      {deleted && (
        <div className="card notice" role="status" data-testid="test-data-deleted">
          {deleted.error ? (
            <p>
              <strong>Deleting test data stopped:</strong> {deleted.error}. Delete again to go on; live data is
              untouched.
            </p>
          ) : !deleted.done ? (
            <p>
              <strong>Deleting test data…</strong>
              {deleted.phase ? ` Now: ${tableName(deleted.phase)}.` : ''} Live data is untouched.
            </p>
          ) : counts.length === 0 ? (
            <Empty title="There was no test data to delete." />
          ) : (
            <p>
              <strong>Test data deleted.</strong> Live data is untouched.
            </p>
          )}
          {counts.length > 0 && (
            <ul className="deleted-counts">
              {counts.map(([table, n]) => (
                <li key={table}>
                  {tableName(table)}: {n}
                </li>
              ))}
            </ul>
          )}
        </div>
      )}
    </section>
  );
}
