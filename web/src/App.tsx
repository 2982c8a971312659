import { createContext, lazy, Suspense, useCallback, useContext, useEffect, useState } from 'react';
import { Navigate, NavLink, Route, Routes, useLocation, useNavigate } from 'react-router';
import { api, auth, data, LIVE, type SessionUser } from './api';
import { ConfirmProvider, Loading } from './ui';
import { setMode, useMode } from './mode';
import { SignIn, AcceptInvitation, ResetPassword } from './pages/Account';
import { Programs } from './pages/Programs';
import { Affiliates } from './pages/Affiliates';
import { AffiliateDetail } from './pages/AffiliateDetail';
import { GetStarted } from './pages/GetStarted';
import { Customers } from './pages/Customers';
import { Coupons } from './pages/Coupons';
import { Commissions } from './pages/Commissions';
import { Developers } from './pages/Developers';
import { Integrations } from './pages/Integrations';
import { Team } from './pages/Team';
import { Imports } from './pages/Imports';
import { TestEmails } from './pages/TestEmails';
import { Branding } from './pages/Branding';

// The chart library is only needed on the overview: loaded with it, not with the app.
const Overview = lazy(() => import('./pages/Overview'));

export interface Session {
  user: SessionUser;
  organization: { id: string; name: string };
}

const SessionContext = createContext<{ session: Session; signOut: (everywhere?: boolean) => Promise<void> } | null>(
  null,
);
export const useSession = () => useContext(SessionContext)!;

const NAV = [
  { to: '/get-started', label: 'Get started' },
  { to: '/overview', label: 'Overview' },
  { to: '/programs', label: 'Programs' },
  { to: '/affiliates', label: 'Affiliates' },
  { to: '/customers', label: 'Customers' },
  { to: '/coupons', label: 'Coupons' },
  { to: '/commissions', label: 'Commissions & payouts' },
  { to: '/integrations', label: 'Integrations', owner: true },
  { to: '/branding', label: 'Branding' },
  { to: '/developers', label: 'Developers' },
  { to: '/team', label: 'Team', owner: true },
  { to: '/imports', label: 'Imports', owner: true },
  // What test data would have e-mailed to partners: there is none in live mode.
  { to: '/test-emails', label: 'Test e-mails', testOnly: true },
];

export function App() {
  const [session, setSession] = useState<Session | null | undefined>(undefined);
  const location = useLocation();

  const load = useCallback(async () => {
    try {
      const found = await auth<{ user: SessionUser } | null>('/get-session');
      if (!found) return setSession(null);
      // The live organization, whatever the mode: its id is the one the snippet and the portal use.
      const me = data(await api.me.get({ extraHeaders: LIVE }));
      setSession({ user: found.user, organization: me.organization });
    } catch {
      setSession(null);
    }
  }, []);
  useEffect(() => {
    void load();
    const ended = () => setSession(null);
    window.addEventListener('session-ended', ended);
    return () => window.removeEventListener('session-ended', ended);
  }, [load]);

  const signOut = useCallback(async (everywhere = false) => {
    if (everywhere) await auth('/revoke-sessions', {});
    else await auth('/sign-out', {});
    setSession(null);
  }, []);

  if (session === undefined) return <Loading />;
  return (
    <ConfirmProvider>
      <Routes>
        <Route path="/sign-in" element={session ? <Navigate to="/" replace /> : <SignIn onSignedIn={load} />} />
        <Route path="/accept-invitation" element={<AcceptInvitation onSignedIn={load} />} />
        <Route path="/reset-password" element={<ResetPassword />} />
        <Route
          path="*"
          element={
            session ? (
              <SessionContext.Provider value={{ session, signOut }}>
                <Shell />
              </SessionContext.Provider>
            ) : (
              <Navigate to="/sign-in" replace state={{ from: location.pathname }} />
            )
          }
        />
      </Routes>
    </ConfirmProvider>
  );
}

function Shell() {
  const { session, signOut } = useSession();
  const owner = session.user.role === 'owner';
  const mode = useMode();
  const testMode = mode === 'test';
  const navigate = useNavigate();
  const location = useLocation();
  const [menuOpen, setMenuOpen] = useState(false);
  useEffect(() => setMenuOpen(false), [location.pathname]);
  return (
    <div className={`shell ${mode === 'test' ? 'test-mode' : ''}`}>
      <a className="skip-link" href="#main">
        Skip to content
      </a>
      <header className="topbar">
        <span>
          <span className="brand">{session.organization.name}</span>
          {mode === 'test' && <span className="badge badge-test mode-tag">Test mode</span>}
        </span>
        <button
          type="button"
          className="menu-toggle secondary small"
          aria-expanded={menuOpen}
          aria-controls="nav"
          onClick={() => setMenuOpen((o) => !o)}
        >
          Menu
        </button>
      </header>
      <nav id="nav" className={`sidebar ${menuOpen ? 'open' : ''}`} aria-label="Dashboard">
        <p className="brand wide">{session.organization.name}</p>
        <ModeSwitch />
        <ul>
          {NAV.filter((item) => (owner || !item.owner) && (testMode || !item.testOnly)).map((item) => (
            <li key={item.to}>
              <NavLink to={item.to}>{item.label}</NavLink>
            </li>
          ))}
        </ul>
        <div className="who">
          <span>
            {session.user.name}
            <br />
            <small>
              {session.user.email} · {session.user.role}
            </small>
          </span>
          <button
            type="button"
            className="secondary small"
            onClick={async () => {
              await signOut();
              // Nothing waits for the navigation: the router renders the next page on its own.
              void navigate('/sign-in');
            }}
          >
            Sign out
          </button>
          <button
            type="button"
            className="link small on-dark"
            onClick={async () => {
              await signOut(true);
              // Nothing waits for the navigation: the router renders the next page on its own.
              void navigate('/sign-in');
            }}
          >
            Sign out everywhere
          </button>
        </div>
      </nav>
      <main id="main" tabIndex={-1}>
        {mode === 'test' && <TestModeBanner />}
        <Suspense fallback={<Loading />}>
          {/* Keyed by the mode: every page mounts again, and loads its data again, when it flips. */}
          <Routes key={mode}>
            <Route path="/" element={<Navigate to="/overview" replace />} />
            <Route path="/overview" element={<Overview />} />
            <Route path="/get-started" element={<GetStarted />} />
            <Route path="/programs" element={<Programs />} />
            <Route path="/affiliates" element={<Affiliates />} />
            <Route path="/affiliates/:id" element={<AffiliateDetail />} />
            <Route path="/customers" element={<Customers />} />
            <Route path="/coupons" element={<Coupons />} />
            <Route path="/commissions" element={<Commissions />} />
            {owner && <Route path="/integrations" element={<Integrations />} />}
            <Route path="/branding" element={<Branding />} />
            <Route path="/developers" element={<Developers />} />
            {owner && <Route path="/team" element={<Team />} />}
            {owner && <Route path="/imports" element={<Imports />} />}
            {testMode && <Route path="/test-emails" element={<TestEmails />} />}
            <Route path="*" element={<NotFound />} />
          </Routes>
        </Suspense>
      </main>
    </div>
  );
}

/** The switch between live and test data (mode.ts): a switch, as the setting it is, with its state in its name for screen readers. */
function ModeSwitch() {
  const mode = useMode();
  const on = mode === 'test';
  return (
    <button
      type="button"
      role="switch"
      aria-checked={on}
      className={`mode-switch ${on ? 'on' : ''}`}
      onClick={() => setMode(on ? 'live' : 'test')}
    >
      <span className="track" aria-hidden="true">
        <span className="thumb" />
      </span>
      Test mode
    </button>
  );
}

/** On every page while test mode is on: what the merchant is looking at, and the way back. */
function TestModeBanner() {
  return (
    <div className="test-banner" role="region" aria-label="Test mode">
      <p>
        <strong>Test mode</strong> — you are viewing test data; nothing here moves money or e-mails partners.
      </p>
      <button type="button" className="secondary small" onClick={() => setMode('live')}>
        Leave test mode
      </button>
    </div>
  );
}

function NotFound() {
  return (
    <section>
      <h1>Not found</h1>
      <p>
        This page does not exist{useSession().session.user.role === 'member' ? ', or only an owner can open it' : ''}.{' '}
        <NavLink to="/overview">Back to the overview</NavLink>
      </p>
    </section>
  );
}
