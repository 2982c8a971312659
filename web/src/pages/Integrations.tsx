import { useState } from 'react';
import type { Integration } from '@affiliate-attribution/contract';
import { api, data } from '../api';
import { CopyButton, Field, FormError, Loading, PageHeader, Status, dateTime, useConfirm, useLoad, useSubmit } from '../ui';

const NAMES: Record<Integration['provider'], string> = { stripe: 'Stripe', paddle: 'Paddle', lemonsqueezy: 'Lemon Squeezy', polar: 'Polar', chargebee: 'Chargebee' };

function ProviderCard({ integration, onChanged }: { integration: Integration; onChanged: () => void }) {
  const [secret, setSecret] = useState('');
  const confirm = useConfirm();
  const save = useSubmit(async () => data(await api.integrations.put({ params: { provider: integration.provider }, body: { signing_secret: secret } })), () => {
    setSecret('');
    onChanged();
  });
  const remove = useSubmit(async () => {
    if (!(await confirm({ title: `Remove the ${NAMES[integration.provider]} secret?`, body: 'Its webhooks are refused from now on, until a secret is stored again.', confirm: 'Remove' }))) return;
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
        <Field label={`${name} signing secret`} name="signing_secret" type="password" autoComplete="off" value={secret} onChange={setSecret} error={save.error} />
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

export function Integrations() {
  const list = useLoad(async () => data(await api.integrations.list()).integrations, []);
  return (
    <section>
      <PageHeader title="Integrations" />
      <p>
        Register the webhook URL in your payment provider's dashboard and store the endpoint's signing secret here: charges, refunds and cancellations then arrive by themselves. The secret is
        never shown again.
      </p>
      <FormError error={list.error} />
      {list.loading && !list.data ? <Loading /> : list.data?.map((i) => <ProviderCard key={i.provider} integration={i} onChanged={list.reload} />)}
      <p className="muted">The log of the last webhook events received, and their outcome, is not in the dashboard yet (the API has no route for it).</p>
    </section>
  );
}
