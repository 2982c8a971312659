import { useState } from 'react';
import { Link } from 'react-router';
import type { ApiKeyInfo } from '@affiliate-attribution/contract';
import { useSession } from '../App';
import { api, data } from '../api';
import { CopyButton, Empty, FormError, PageHeader, Status, dateTime, useConfirm, useSubmit } from '../ui';
import { DataTable, usePagedList } from '../table';
import { WebhookEndpoints } from './WebhookEndpoints';
import { TestData } from './TestData';
import { LinkParams } from './LinkParams';
import { useMode } from '../mode';

function ApiKeys() {
  const mode = useMode();
  // This page shows the keys of the mode it is in: the API filters them before paging.
  const keys = usePagedList(
    async (cursor) => {
      const page = data(await api.people.listApiKeys({ query: { cursor, mode } }));
      return { items: page.api_keys, next_cursor: page.next_cursor };
    },
    [mode],
  );
  const [issued, setIssued] = useState<{ key: string; info: ApiKeyInfo }>();
  const confirm = useConfirm();
  const create = useSubmit(
    async () => data(await api.people.createApiKey({})),
    (result) => {
      setIssued({ key: result.api_key, info: result.api_key_info });
      keys.reload();
    },
  );
  const revoke = useSubmit(async () => undefined);
  async function revokeKey(key: ApiKeyInfo) {
    if (
      !(await confirm({
        title: `Revoke ${key.redacted}?`,
        body: 'Every request with this key is refused from now on, on every instance. Deploy its replacement first.',
        confirm: 'Revoke key',
      }))
    )
      return;
    revoke.setError(undefined);
    try {
      data(await api.people.revokeApiKey({ params: { id: key.id } }));
      if (issued?.info.id === key.id) setIssued(undefined);
    } catch (err) {
      revoke.setError(err as never);
    }
    keys.reload();
  }
  return (
    <section aria-labelledby="keys-title">
      <h2 id="keys-title">{mode === 'test' ? 'Test API keys' : 'API keys'}</h2>
      <p>
        Your backend calls the API with a key: keep it on your servers. To rotate a key, create a new one, deploy it,
        then revoke the old one.{' '}
        {mode === 'test' ? (
          <>
            Test keys begin <code>svc_test_</code>: what they write is test data, seen only in test mode and with test
            keys. Live keys are listed when test mode is off.
          </>
        ) : (
          <>Test keys (for trying every path without real partners or money) are listed in test mode.</>
        )}
      </p>
      <button type="button" onClick={() => void create.submit()} disabled={create.busy}>
        {mode === 'test' ? 'Create test API key' : 'Create API key'}
      </button>
      <FormError error={create.error ?? revoke.error} />
      {issued && (
        <div className="card notice" role="status">
          <p>
            <strong>Your new key, shown this once.</strong> Copy it now: the service keeps only its hash.
          </p>
          <p className="secret">
            <code data-testid="new-api-key">{issued.key}</code> <CopyButton text={issued.key} />
          </p>
          <button type="button" className="secondary small" onClick={() => setIssued(undefined)}>
            I have stored it
          </button>
        </div>
      )}
      <DataTable
        label="API keys"
        list={keys}
        rowKey={(k) => k.id}
        empty={
          <Empty title={mode === 'test' ? 'No test API key' : 'No API key'}>
            <p>Create one to call the API from your backend.</p>
          </Empty>
        }
        columns={[
          { header: 'Key', rowHeader: true, cell: (k) => <code>{k.redacted}</code> },
          { header: 'Mode', cell: (k) => <Status value={k.mode} /> },
          { header: 'Created', cell: (k) => dateTime(k.created_at) },
          { header: 'Status', cell: (k) => <Status value={k.revoked_at ? 'revoked' : 'active'} /> },
          {
            header: 'Actions',
            hiddenHeader: true,
            cell: (k) =>
              !k.revoked_at && (
                <button
                  type="button"
                  className="danger small"
                  onClick={() => void revokeKey(k)}
                  aria-label={`Revoke ${k.redacted}`}
                >
                  Revoke
                </button>
              ),
          },
        ]}
      />
    </section>
  );
}

export function Developers() {
  const { session } = useSession();
  const mode = useMode();
  const owner = session.user.role === 'owner';
  const origin = window.location.origin;
  const snippet = `<script>
  window.svc = window.svc || function () { var a = arguments; return new Promise(function (r) { a.r = r; (svc.q = svc.q || []).push(a); }); };
</script>
<script async src="${origin}/snippet.js" data-organization="${session.organization.id}"${mode === 'test' ? ' data-mode="test"' : ''}></script>`;
  return (
    <section>
      <PageHeader title="Developers" />
      {owner ? (
        <ApiKeys />
      ) : (
        <section aria-labelledby="keys-title">
          <h2 id="keys-title">API keys</h2>
          <p className="muted">Only an owner of the organization can create and revoke API keys.</p>
        </section>
      )}
      {mode === 'test' && <TestData />}
      <WebhookEndpoints />
      <section aria-labelledby="snippet-title">
        <h2 id="snippet-title">Tracking snippet</h2>
        <p>
          Add it to the &lt;head&gt; of your landing and signup pages: it keeps the referral in a first-party cookie.
          Your organization id is public; no key is needed.
          {mode === 'test'
            ? ' With data-mode="test", the clicks and signups it records are test data; remove it to go live.'
            : ''}{' '}
          The server middleware (recommended) and the signup and payment calls from your backend:{' '}
          <Link to="/get-started">Get started</Link>.
        </p>
        <pre className="code" tabIndex={0} aria-label="Snippet tag">
          {snippet}
        </pre>
        <CopyButton text={snippet} label="Copy snippet" />
      </section>
      <LinkParams />
      <section aria-labelledby="docs-title">
        <h2 id="docs-title">API reference</h2>
        <p>
          Every endpoint, with examples: <a href="/docs">the API reference</a> (and{' '}
          <a href="/openapi.json">openapi.json</a> for client generators). Organization id:{' '}
          <code>{session.organization.id}</code> <CopyButton text={session.organization.id} />
        </p>
      </section>
    </section>
  );
}
