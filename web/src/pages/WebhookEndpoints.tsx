import { useId, useState } from 'react';
import { OUTBOUND_EVENT_TYPES, type OutboundEventType, type WebhookEndpoint } from '@affiliate-attribution/contract';
import { api, data, type ApiError } from '../api';
import { CopyButton, Empty, Field, FormError, Status, dateTime, toApiError, useConfirm, useSubmit } from '../ui';
import { DataTable, usePagedList } from '../table';
import { DeliveryLog } from './WebhookDeliveryLog';

/** The event checkboxes: the API's message about `events` (or one of them, `events.2`) goes under them. */
function EventsField({
  value,
  onChange,
  error,
}: {
  value: OutboundEventType[];
  onChange: (v: OutboundEventType[]) => void;
  error?: ApiError;
}) {
  const id = useId();
  const mine = error?.field?.split('.')[0] === 'events';
  const all = value.length === OUTBOUND_EVENT_TYPES.length;
  return (
    <fieldset className="field events span" aria-describedby={mine ? `${id}-error` : undefined} aria-invalid={mine}>
      <legend>Events</legend>
      <label className="check">
        <input
          type="checkbox"
          checked={all}
          onChange={(e) => onChange(e.target.checked ? [...OUTBOUND_EVENT_TYPES] : [])}
        />{' '}
        Every event
      </label>
      <div className="checks">
        {OUTBOUND_EVENT_TYPES.map((type) => (
          <label key={type} className="check">
            <input
              type="checkbox"
              name="events"
              value={type}
              checked={value.includes(type)}
              onChange={(e) =>
                onChange(
                  e.target.checked
                    ? OUTBOUND_EVENT_TYPES.filter((t) => t === type || value.includes(t))
                    : value.filter((t) => t !== type),
                )
              }
            />{' '}
            <code>{type}</code>
          </label>
        ))}
      </div>
      {mine && (
        <small id={`${id}-error`} className="field-error" role="alert">
          {error.detail}
        </small>
      )}
    </fieldset>
  );
}

type Saved = { webhook_endpoint: WebhookEndpoint; secret?: string };

function EndpointForm({
  endpoint,
  onSaved,
  onCancel,
}: {
  endpoint?: WebhookEndpoint;
  onSaved: (saved: Saved) => void;
  onCancel: () => void;
}) {
  const [url, setUrl] = useState(endpoint?.url ?? '');
  const [description, setDescription] = useState(endpoint?.description ?? '');
  const [events, setEvents] = useState<OutboundEventType[]>(endpoint?.events ?? [...OUTBOUND_EVENT_TYPES]);
  const save = useSubmit(async (): Promise<Saved> => {
    const body = { url: url.trim(), events, description: description.trim() || undefined };
    if (!endpoint) return data(await api.webhookEndpoints.create({ body }));
    return data(
      await api.webhookEndpoints.update({
        params: { id: endpoint.id },
        body: { ...body, description: description.trim() || null },
      }),
    );
  }, onSaved);
  const e = save.error;
  const title = endpoint ? `Edit the endpoint ${endpoint.url}` : 'Add a webhook endpoint';
  return (
    <form className="card form-grid" onSubmit={save.submit} noValidate aria-label={title}>
      <h3 className="span">{endpoint ? 'Edit endpoint' : 'Add an endpoint'}</h3>
      <Field
        label="Endpoint URL"
        name="url"
        type="url"
        value={url}
        onChange={setUrl}
        error={e}
        placeholder="https://example.com/webhooks/affiliates"
        required
      />
      <Field
        label="Description (optional)"
        name="description"
        value={description}
        onChange={setDescription}
        error={e}
      />
      <EventsField value={events} onChange={setEvents} error={e} />
      <FormError error={e} fields={['url', 'description', ...(e?.field?.startsWith('events') ? [e.field] : [])]} />
      <div className="actions span">
        <button type="submit" disabled={save.busy}>
          {endpoint ? 'Save endpoint' : 'Add endpoint'}
        </button>
        <button type="button" className="secondary" onClick={onCancel}>
          Cancel
        </button>
      </div>
    </form>
  );
}

function SecretNotice({ secret, title, onDone }: { secret: string; title: string; onDone: () => void }) {
  return (
    <div className="card notice" role="status">
      <p>
        <strong>{title}</strong> Copy it now: it is not shown again. Your receiver verifies each delivery's{' '}
        <code>webhook-signature</code> with it (Standard Webhooks).
      </p>
      <p className="secret">
        <code data-testid="new-endpoint-secret">{secret}</code> <CopyButton text={secret} />
      </p>
      <button type="button" className="secondary small" onClick={onDone}>
        I have stored it
      </button>
    </div>
  );
}

export function WebhookEndpoints() {
  const confirm = useConfirm();
  const endpoints = usePagedList(async (cursor) => {
    const page = data(await api.webhookEndpoints.list({ query: { cursor } }));
    return { items: page.webhook_endpoints, next_cursor: page.next_cursor };
  }, []);
  const [editing, setEditing] = useState<WebhookEndpoint | 'new'>();
  const [secret, setSecret] = useState<{ value: string; title: string }>();
  const [logOf, setLogOf] = useState<WebhookEndpoint>();
  const act = useSubmit(async () => undefined);

  async function run(action: () => Promise<unknown>) {
    act.setError(undefined);
    try {
      await action();
    } catch (err) {
      act.setError(toApiError(err));
    }
    endpoints.reload();
  }
  const rotate = async (ep: WebhookEndpoint) => {
    const ok = await confirm({
      title: `Rotate the secret of ${ep.url}?`,
      body: 'A new secret is issued and shown once. For 24 hours every delivery is signed with both, so your receiver keeps accepting them while you deploy the new one.',
      confirm: 'Rotate secret',
    });
    if (ok)
      await run(async () =>
        setSecret({
          value: data(await api.webhookEndpoints.rotateSecret({ params: { id: ep.id }, body: {} })).secret,
          title: `The new secret of ${ep.url}, shown this once.`,
        }),
      );
  };
  const toggle = async (ep: WebhookEndpoint) => {
    if (
      ep.enabled &&
      !(await confirm({
        title: `Disable ${ep.url}?`,
        body: 'Nothing is sent to it until you enable it again; deliveries already scheduled fail.',
        confirm: 'Disable',
      }))
    )
      return;
    await run(async () =>
      data(await api.webhookEndpoints.update({ params: { id: ep.id }, body: { enabled: !ep.enabled } })),
    );
  };
  const remove = async (ep: WebhookEndpoint) => {
    if (
      !(await confirm({
        title: `Delete ${ep.url}?`,
        body: 'The endpoint and its delivery log are deleted; nothing more is sent to it. This cannot be undone.',
        confirm: 'Delete endpoint',
      }))
    )
      return;
    await run(async () => {
      data(await api.webhookEndpoints.delete({ params: { id: ep.id } }));
      if (logOf?.id === ep.id) setLogOf(undefined);
    });
  };

  return (
    <section aria-labelledby="endpoints-title">
      <h2 id="endpoints-title">Webhook endpoints</h2>
      <p>
        The service POSTs signed events (affiliates, customers, conversions, commissions, payouts) to your URLs as they
        happen, and retries for 3 days until your endpoint answers 2xx.
      </p>
      <button type="button" onClick={() => setEditing('new')}>
        Add endpoint
      </button>
      {editing && (
        <EndpointForm
          key={editing === 'new' ? 'new' : editing.id}
          endpoint={editing === 'new' ? undefined : editing}
          onCancel={() => setEditing(undefined)}
          onSaved={(saved) => {
            setEditing(undefined);
            if (saved.secret)
              setSecret({
                value: saved.secret,
                title: `The signing secret of ${saved.webhook_endpoint.url}, shown this once.`,
              });
            endpoints.reload();
          }}
        />
      )}
      {secret && <SecretNotice secret={secret.value} title={secret.title} onDone={() => setSecret(undefined)} />}
      <FormError error={act.error} />
      <DataTable
        label="Webhook endpoints"
        list={endpoints}
        rowKey={(ep) => ep.id}
        empty={
          !editing && (
            <Empty title="No webhook endpoint">
              <p>
                Add one to have your systems told of new affiliates, conversions, commissions and payouts as they
                happen.
              </p>
            </Empty>
          )
        }
        columns={[
          {
            header: 'URL',
            rowHeader: true,
            cell: (ep) => (
              <>
                <code className="break">{ep.url}</code>
                {ep.description && (
                  <>
                    <br />
                    <small className="muted">{ep.description}</small>
                  </>
                )}
              </>
            ),
          },
          {
            header: 'Events',
            cell: (ep) => (ep.events.length === OUTBOUND_EVENT_TYPES.length ? 'every event' : ep.events.join(', ')),
          },
          {
            header: 'Status',
            cell: (ep) => (
              <>
                <Status value={ep.enabled ? 'enabled' : 'disabled'} />
                {ep.disabled_reason && <small className="muted"> {ep.disabled_reason}</small>}
                {ep.previous_secret_expires_at && (
                  <small className="muted">
                    {' '}
                    · previous secret valid until {dateTime(ep.previous_secret_expires_at)}
                  </small>
                )}
              </>
            ),
          },
          {
            header: 'Actions',
            hiddenHeader: true,
            cell: (ep) => (
              <span className="row-actions">
                <button
                  type="button"
                  className="small"
                  aria-pressed={logOf?.id === ep.id}
                  onClick={() => setLogOf(logOf?.id === ep.id ? undefined : ep)}
                  aria-label={`Deliveries to ${ep.url}`}
                >
                  Deliveries
                </button>
                <button
                  type="button"
                  className="secondary small"
                  onClick={() => setEditing(ep)}
                  aria-label={`Edit ${ep.url}`}
                >
                  Edit
                </button>
                <button
                  type="button"
                  className="secondary small"
                  onClick={() => void rotate(ep)}
                  aria-label={`Rotate secret of ${ep.url}`}
                >
                  Rotate secret
                </button>
                <button
                  type="button"
                  className={ep.enabled ? 'danger small' : 'secondary small'}
                  onClick={() => void toggle(ep)}
                  aria-label={`${ep.enabled ? 'Disable' : 'Enable'} ${ep.url}`}
                >
                  {ep.enabled ? 'Disable' : 'Enable'}
                </button>
                <button
                  type="button"
                  className="danger small"
                  onClick={() => void remove(ep)}
                  aria-label={`Delete ${ep.url}`}
                >
                  Delete
                </button>
              </span>
            ),
          },
        ]}
      />
      {logOf && <DeliveryLog key={logOf.id} endpoint={logOf} onClose={() => setLogOf(undefined)} />}
    </section>
  );
}
