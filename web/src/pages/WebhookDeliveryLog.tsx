import { useEffect, useState } from 'react';
import {
  type WebhookDelivery,
  type WebhookDeliveryStatus,
  type WebhookEndpoint,
} from '@affiliate-attribution/contract';
import { api, data, type ApiError } from '../api';
import { Empty, FormError, Status, dateTime, toApiError } from '../ui';
import { DataTable, FilterSelect, usePagedList } from '../table';

const DELIVERY_STATUSES: WebhookDeliveryStatus[] = ['pending', 'succeeded', 'failed'];

function lastAnswer(d: WebhookDelivery): string {
  if (d.last_response_status !== null) return `HTTP ${d.last_response_status}`;
  return d.last_error ?? (d.attempts === 0 ? 'not sent yet' : '—');
}

/** One endpoint's delivery log, newest first, paged on the server; refreshed while a delivery is pending. */
export function DeliveryLog({ endpoint, onClose }: { endpoint: WebhookEndpoint; onClose: () => void }) {
  const [status, setStatus] = useState<WebhookDeliveryStatus | ''>('');
  const log = usePagedList(
    async (cursor) => {
      const page = data(
        await api.webhookEndpoints.listDeliveries({
          params: { id: endpoint.id },
          query: { cursor, status: status || undefined, limit: 20 },
        }),
      );
      return { items: page.deliveries, next_cursor: page.next_cursor };
    },
    [endpoint.id, status],
  );
  const [retryError, setRetryError] = useState<ApiError>();
  const pending = log.rows?.some((d) => d.status === 'pending') ?? false;
  const { reload } = log;
  useEffect(() => {
    if (!pending) return;
    const timer = setInterval(reload, 3000);
    return () => clearInterval(timer);
  }, [pending, reload]);
  async function retry(delivery: WebhookDelivery) {
    setRetryError(undefined);
    try {
      data(await api.webhookEndpoints.retryDelivery({ params: { id: delivery.id }, body: {} }));
    } catch (err) {
      setRetryError(toApiError(err));
    }
    reload();
  }
  return (
    <section className="card" aria-labelledby="deliveries-title">
      <h3 id="deliveries-title">
        Deliveries to <code>{endpoint.url}</code>
      </h3>
      <div className="filters">
        <FilterSelect
          label="Delivery status"
          name="delivery-status"
          value={status}
          every="Every status"
          options={DELIVERY_STATUSES}
          onChange={(value) => {
            setStatus(value);
            log.pages.reset();
          }}
        />
        <button type="button" className="secondary" onClick={reload}>
          Refresh
        </button>
        <button type="button" className="secondary" onClick={onClose}>
          Close
        </button>
      </div>
      <FormError error={retryError} />
      <DataTable
        label="Deliveries"
        list={log}
        rowKey={(d) => d.id}
        empty={
          <Empty title={status ? `No ${status} delivery` : 'No delivery yet'}>
            <p>
              Events of the types this endpoint subscribes to are sent here as they happen: add an affiliate or record a
              conversion to send one.
            </p>
          </Empty>
        }
        columns={[
          {
            header: 'Event',
            rowHeader: true,
            cell: (d) => (
              <>
                <code>{d.event_type}</code>
                <br />
                <small className="muted">{d.event_id}</small>
              </>
            ),
          },
          { header: 'Status', cell: (d) => <Status value={d.status} /> },
          { header: 'Attempts', cell: (d) => d.attempts },
          {
            header: 'Last answer',
            cell: (d) => (
              <>
                {lastAnswer(d)}
                {d.last_response_body && (
                  <details>
                    <summary>Body</summary>
                    <pre className="answer">{d.last_response_body}</pre>
                  </details>
                )}
              </>
            ),
          },
          { header: 'Last attempt', cell: (d) => dateTime(d.last_attempt_at) },
          { header: 'Next attempt', cell: (d) => dateTime(d.next_attempt_at) },
          {
            header: 'Actions',
            hiddenHeader: true,
            cell: (d) => (
              <button
                type="button"
                className="secondary small"
                onClick={() => void retry(d)}
                aria-label={`Retry the ${d.event_type} delivery ${d.event_id}`}
              >
                Retry
              </button>
            ),
          },
        ]}
      />
    </section>
  );
}

/** Outbound webhook endpoints: create (secret shown once), edit, enable / disable, rotate the secret (shown once), delete; each one's delivery log. */
