import { useState } from 'react';
import { useLocation, useNavigate, useSearchParams } from 'react-router';
import { api, auth, data } from '../api';
import { Field, FormError, useSubmit } from '../ui';

function AccountPage({ title, children }: { title: string; children: React.ReactNode }) {
  return (
    <main className="account" id="main">
      <div className="card account-card">
        <p className="brand">Affiliate dashboard</p>
        <h1>{title}</h1>
        {children}
      </div>
    </main>
  );
}

export function SignIn({ onSignedIn }: { onSignedIn: () => Promise<void> }) {
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [resetSent, setResetSent] = useState(false);
  const navigate = useNavigate();
  const from = (useLocation().state as { from?: string } | null)?.from;
  const signIn = useSubmit(
    () => auth('/sign-in/email', { email, password }),
    async () => {
      await onSignedIn();
      // Nothing waits for the navigation: the router renders the next page on its own.
      void navigate(from && from !== '/sign-in' ? from : '/overview', { replace: true });
    },
  );
  const reset = useSubmit(
    () => auth('/request-password-reset', { email }),
    () => setResetSent(true),
  );
  const [linkSent, setLinkSent] = useState(false);
  const link = useSubmit(
    () =>
      auth('/sign-in/magic-link', {
        email,
        callbackURL: '/dashboard/overview',
        errorCallbackURL: '/dashboard/sign-in?link=invalid',
      }),
    () => setLinkSent(true),
  );
  const invalidLink = new URLSearchParams(useLocation().search).get('link') === 'invalid';
  return (
    <AccountPage title="Sign in">
      <form onSubmit={signIn.submit} noValidate>
        <Field
          label="E-mail"
          name="email"
          type="email"
          autoComplete="username"
          value={email}
          onChange={setEmail}
          required
          error={signIn.error}
        />
        <Field
          label="Password"
          name="password"
          type="password"
          autoComplete="current-password"
          value={password}
          onChange={setPassword}
          required
          error={signIn.error}
        />
        <FormError error={signIn.error ?? reset.error ?? link.error} />
        {invalidLink && !signIn.error && (
          <p className="error" role="alert">
            That sign-in link is not valid any more (used, or older than 15 minutes): ask for another one.
          </p>
        )}
        {resetSent && <p role="status">If this address has an account, a link to reset its password is on its way.</p>}
        {linkSent && (
          <p role="status">If this address has an account, a sign-in link is on its way (valid 15 minutes).</p>
        )}
        <div className="actions">
          <button type="submit" disabled={signIn.busy}>
            Sign in
          </button>
          <button type="button" className="link" onClick={() => void reset.submit()} disabled={reset.busy || !email}>
            Forgot your password?
          </button>
          <button type="button" className="link" onClick={() => void link.submit()} disabled={link.busy || !email}>
            E-mail me a sign-in link
          </button>
        </div>
        <p className="muted small">
          No account? Your organization's owner invites you from the Team page; the first owner is invited by the
          service's operator.
        </p>
      </form>
    </AccountPage>
  );
}

export function AcceptInvitation({ onSignedIn }: { onSignedIn: () => Promise<void> }) {
  const [params] = useSearchParams();
  const token = params.get('token') ?? '';
  const [name, setName] = useState('');
  const [password, setPassword] = useState('');
  const navigate = useNavigate();
  const accept = useSubmit(
    async () => {
      const { user } = data(await api.account.acceptInvitation({ body: { token, name, password } }));
      await auth('/sign-in/email', { email: user.email, password });
    },
    async () => {
      await onSignedIn();
      // Nothing waits for the navigation: the router renders the next page on its own.
      void navigate('/overview', { replace: true });
    },
  );
  return (
    <AccountPage title="Join the dashboard">
      <p>Choose your name and a password (10 characters or more) to accept the invitation.</p>
      <form onSubmit={accept.submit} noValidate>
        <Field
          label="Your name"
          name="name"
          autoComplete="name"
          value={name}
          onChange={setName}
          required
          error={accept.error}
        />
        <Field
          label="Password"
          name="password"
          type="password"
          autoComplete="new-password"
          value={password}
          onChange={setPassword}
          required
          error={accept.error}
        />
        <FormError error={accept.error} fields={['name', 'password']} />
        <div className="actions">
          <button type="submit" disabled={accept.busy || !token}>
            Accept and sign in
          </button>
        </div>
      </form>
    </AccountPage>
  );
}

export function ResetPassword() {
  const [params] = useSearchParams();
  const [password, setPassword] = useState('');
  const [done, setDone] = useState(false);
  const reset = useSubmit(
    () => auth('/reset-password', { newPassword: password, token: params.get('token') ?? '' }),
    () => setDone(true),
  );
  return (
    <AccountPage title="Choose a new password">
      {done ? (
        <p role="status">
          Your password is changed and every session of yours has ended. <a href="/dashboard/sign-in">Sign in</a>
        </p>
      ) : (
        <form onSubmit={reset.submit} noValidate>
          <Field
            label="New password"
            name="password"
            type="password"
            autoComplete="new-password"
            value={password}
            onChange={setPassword}
            required
            error={reset.error}
          />
          <FormError error={reset.error} fields={['password']} />
          <div className="actions">
            <button type="submit" disabled={reset.busy}>
              Set password
            </button>
          </div>
        </form>
      )}
    </AccountPage>
  );
}
