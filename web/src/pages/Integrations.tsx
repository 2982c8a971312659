import { useState } from 'react';
import {
  LOGGED_WEBHOOK_PROVIDERS,
  type Integration,
  type LoggedWebhookProvider,
  type ReceivedWebhookOutcome,
} from '@affiliate-attribution/contract';
import { api, data } from '../api';
import {
  CopyButton,
  Empty,
  Field,
  FormError,
  Loading,
  PageHeader,
  Status,
  dateTime,
  useConfirm,
  useLoad,
  useSubmit,
} from '../ui';
import { DataTable, FilterSelect, usePagedList } from '../table';

const NAMES: Record<Integration['provider'], string> = {
  stripe: 'Stripe',
  paddle: 'Paddle',
  lemonsqueezy: 'Lemon Squeezy',
  polar: 'Polar',
  chargebee: 'Chargebee',
  paypal_payouts: 'PayPal Payouts',
  stripe_connect: 'Stripe Connect',
  wise: 'Wise',
};

function ProviderCard({ integration, onChanged }: { integration: Integration; onChanged: () => void }) {
  const [secret, setSecret] = useState('');
  const confirm = useConfirm();
  const save = useSubmit(
    async () =>
      data(
        await api.integrations.put({ params: { provider: integration.provider }, body: { signing_secret: secret } }),
      ),
    () => {
      setSecret('');
      onChanged();
    },
  );
  const remove = useSubmit(async () => {
    if (
      !(await confirm({
        title: `Remove the ${NAMES[integration.provider]} secret?`,
        body: 'Its webhooks are refused from now on, until a secret is stored again.',
        confirm: 'Remove',
      }))
    )
      return;
    return data(await api.integrations.delete({ params: { provider: integration.provider } }));
  }, onChanged);
  const url = `${window.location.origin}${integration.webhook_path}`;
  const name = NAMES[integration.provider];
  return (
    <article className="card" aria-labelledby={`${integration.provider}-title`}>
      <h2 id={`${integration.provider}-title`}>
        {name} <Status value={integration.configured ? 'configured' : 'not_configured'} />
      </h2>
      <p>
        Webhook URL: <code>{url}</code> <CopyButton text={url} label="Copy URL" />
      </p>
      {integration.updated_at && <p className="muted">Secret stored {dateTime(integration.updated_at)}.</p>}
      <form className="inline-form" onSubmit={save.submit} noValidate>
        <Field
          label={`${name} signing secret`}
          name="signing_secret"
          type="password"
          autoComplete="off"
          value={secret}
          onChange={setSecret}
          error={save.error}
        />
        <button type="submit" disabled={save.busy}>
          {integration.configured ? 'Replace secret' : 'Store secret'}
        </button>
        {integration.configured && (
          <button type="button" className="danger" onClick={() => void remove.submit()}>
            Remove
          </button>
        )}
        <FormError error={save.error ?? remove.error} fields={['signing_secret']} />
      </form>
    </article>
  );
}

type RailProvider = 'paypal_payouts' | 'stripe_connect' | 'wise';

/** The fields each payout rail takes (PUT /api/integrations/{rail}); secrets are write-only. */
const RAIL_FIELDS: Record<RailProvider, { name: string; label: string; secret?: boolean }[]> = {
  paypal_payouts: [
    { name: 'client_id', label: 'Client id' },
    { name: 'client_secret', label: 'Secret', secret: true },
    { name: 'webhook_id', label: 'Webhook id (PAYMENT.PAYOUTS-ITEM.* events)' },
  ],
  stripe_connect: [{ name: 'secret_key', label: 'Secret key (sk_… or rk_…)', secret: true }],
  wise: [
    { name: 'api_token', label: 'API token', secret: true },
    { name: 'profile_id', label: 'Business profile id' },
  ],
};

/** A payout rail: the credentials payouts are sent with from the merchant's own account. */
function RailCard({ integration, onChanged }: { integration: Integration; onChanged: () => void }) {
  const provider = integration.provider as RailProvider;
  const [values, setValues] = useState<Record<string, string>>({});
  const [environment, setEnvironment] = useState<'sandbox' | 'live'>(integration.environment ?? 'sandbox');
  const confirm = useConfirm();
  const save = useSubmit(
    async () => {
      const body: Record<string, string> = Object.fromEntries(
        Object.entries(values)
          .filter(([, v]) => v.trim() !== '')
          .map(([k, v]) => [k, v.trim()]),
      );
      if (provider !== 'stripe_connect') body.environment = environment;
      return data(await api.integrations.put({ params: { provider }, body }));
    },
    () => {
      setValues({});
      onChanged();
    },
  );
  const remove = useSubmit(async () => {
    if (
      !(await confirm({
        title: `Remove the ${NAMES[provider]} credentials?`,
        body: 'Payouts by this rail are refused from now on; those in flight keep being reconciled only once credentials are stored again.',
        confirm: 'Remove',
      }))
    )
      return;
    return data(await api.integrations.delete({ params: { provider } }));
  }, onChanged);
  const url = `${window.location.origin}${integration.webhook_path}`;
  return (
    <article className="card" aria-labelledby={`${provider}-title`}>
      <h2 id={`${provider}-title`}>
        {NAMES[provider]} <Status value={integration.configured ? 'configured' : 'not_configured'} />{' '}
        {integration.environment && <small className="muted">{integration.environment}</small>}
      </h2>
      <p>
        Payouts of affiliates paid by {NAMES[provider]} are sent from your account. Outcomes arrive at{' '}
        <code>{url}</code> <CopyButton text={url} label="Copy URL" />
      </p>
      <form className="inline-form" onSubmit={save.submit} noValidate>
        {RAIL_FIELDS[provider].map((f) => (
          <Field
            key={f.name}
            label={f.label}
            name={f.name}
            type={f.secret ? 'password' : 'text'}
            autoComplete="off"
            value={values[f.name] ?? ''}
            onChange={(v) => setValues((x) => ({ ...x, [f.name]: v }))}
            error={save.error}
          />
        ))}
        {provider !== 'stripe_connect' && (
          <Field label="Environment" name="environment" error={save.error}>
            {(attrs) => (
              <select
                {...attrs}
                value={environment}
                onChange={(e) => setEnvironment(e.target.value as 'sandbox' | 'live')}
              >
                <option value="sandbox">Sandbox</option>
                <option value="live">Live</option>
              </select>
            )}
          </Field>
        )}
        <button type="submit" disabled={save.busy}>
          {integration.configured ? 'Replace credentials' : 'Store credentials'}
        </button>
        {integration.configured && (
          <button type="button" className="danger" onClick={() => void remove.submit()}>
            Remove
          </button>
        )}
        <FormError
          error={save.error ?? remove.error}
          fields={[...RAIL_FIELDS[provider].map((f) => f.name), 'environment']}
        />
      </form>
    </article>
  );
}

export function Integrations() {
  const list = useLoad(async () => data(await api.integrations.list()).integrations, []);
  return (
    <section>
      <PageHeader title="Integrations" />
      <p>
        Register the webhook URL in your payment provider's dashboard and store the endpoint's signing secret here:
        charges, refunds and cancellations then arrive by themselves. The secret is never shown again.
      </p>
      <FormError error={list.error} />
      {list.loading && !list.data ? (
        <Loading />
      ) : (
        list.data
          ?.filter((i) => i.kind === 'payment_provider')
          .map((i) => <ProviderCard key={i.provider} integration={i} onChanged={list.reload} />)
      )}
      <h2>Payout rails</h2>
      <p>
        Send payouts from your own PayPal, Stripe or Wise account (Commissions and payouts, "Send selected").
        Credentials are never shown again, and are encrypted at rest when the service has an ENCRYPTION_KEY.
      </p>
      {list.data
        ?.filter((i) => i.kind === 'payout_rail')
        .map((i) => (
          <RailCard key={i.provider} integration={i} onChanged={list.reload} />
        ))}
      <ReceivedEvents />
    </section>
  );
}

const OUTCOMES: ReceivedWebhookOutcome[] = ['processed', 'ignored', 'rejected'];

/** The provider webhooks received, newest first (GET /api/integrations/events): what each did, or why it was ignored or rejected. */
function ReceivedEvents() {
  const [provider, setProvider] = useState<LoggedWebhookProvider | ''>('');
  const [outcome, setOutcome] = useState<ReceivedWebhookOutcome | ''>('');
  const events = usePagedList(
    async (cursor) => {
      const page = data(
        await api.integrations.listEvents({
          query: { cursor, provider: provider || undefined, outcome: outcome || undefined, limit: 25 },
        }),
      );
      return { items: page.webhook_events, next_cursor: page.next_cursor };
    },
    [provider, outcome],
  );
  return (
    <section aria-labelledby="received-title">
      <h2 id="received-title">Webhooks received</h2>
      <p>
        The last events your providers sent, newest first, and what the service made of them. A wrong or missing signing
        secret shows here as rejected.
      </p>
      <div className="filters">
        <FilterSelect
          label="Provider"
          name="provider"
          value={provider}
          every="Every provider"
          options={LOGGED_WEBHOOK_PROVIDERS}
          optionLabel={(p) => NAMES[p]}
          onChange={(value) => {
            setProvider(value);
            events.pages.reset();
          }}
        />
        <FilterSelect
          label="Outcome"
          name="outcome"
          value={outcome}
          every="Every outcome"
          options={OUTCOMES}
          onChange={(value) => {
            setOutcome(value);
            events.pages.reset();
          }}
        />
        <button type="button" className="secondary" onClick={events.reload}>
          Refresh
        </button>
      </div>
      <DataTable
        label="Received webhooks"
        list={events}
        rowKey={(e) => `${e.provider}:${e.outcome === 'rejected' ? `rejected:${e.detail}` : e.event_id}`}
        empty={
          <Empty title={provider || outcome ? 'No webhook matches' : 'No webhook received yet'}>
            <p>
              Register the webhook URL above in your payment provider's dashboard, store its signing secret, then send a
              test event from there: it shows up here.
            </p>
          </Empty>
        }
        columns={[
          { header: 'Received', rowHeader: true, className: 'nowrap', cell: (e) => dateTime(e.received_at) },
          { header: 'Provider', cell: (e) => NAMES[e.provider] },
          {
            header: 'Event',
            cell: (e) =>
              e.event_type ? (
                <>
                  <code>{e.event_type}</code>
                  <br />
                  <small className="muted">{e.event_id}</small>
                </>
              ) : (
                <span className="muted">not read (unverified)</span>
              ),
          },
          { header: 'Outcome', cell: (e) => <Status value={e.outcome} /> },
          {
            header: 'Detail',
            className: 'wide',
            cell: (e) => (
              <>
                {e.detail ?? '—'}
                {e.outcome === 'rejected' && (
                  <>
                    <br />
                    <small className="muted">
                      {e.requests === 1 ? '1 request' : `${e.requests} requests since ${dateTime(e.first_received_at)}`}
                    </small>
                  </>
                )}
              </>
            ),
          },
        ]}
      />
    </section>
  );
}
