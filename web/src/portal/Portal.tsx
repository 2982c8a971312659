import { Route, Routes } from 'react-router';
import { Join } from './Join';
import { PartnerHome } from './PartnerHome';
import { Preview, RequestLink, UseLink } from './SignIn';

/**
 * The partner portal (/portal): a program's public join page, signing in by an e-mailed link, and
 * the signed-in partner's own figures. It calls only /partner/api, with the partner session cookie.
 */
export function Portal() {
  return (
    <Routes>
      <Route path="/:organizationId/join/:programId" element={<Join />} />
      <Route path="/:organizationId/sign-in" element={<RequestLink />} />
      <Route path="/:organizationId/sign-in/link" element={<UseLink />} />
      <Route path="/:organizationId/preview" element={<Preview />} />
      <Route path="/:organizationId" element={<PartnerHome />} />
      <Route
        path="*"
        element={
          <main className="account" id="main">
            <div className="card account-card">
              <h1>Partner portal</h1>
              <p>Open the link your merchant gave you: its join page, or its sign-in page.</p>
            </div>
          </main>
        }
      />
    </Routes>
  );
}

export function PortalCard({ brand, title, children }: { brand?: string; title: string; children: React.ReactNode }) {
  return (
    <main className="account" id="main">
      <div className="card account-card portal-card">
        <p className="brand">{brand ? `${brand} · partner portal` : 'Partner portal'}</p>
        <h1>{title}</h1>
        {children}
      </div>
    </main>
  );
}
