import { TEST_ADMIN_TOKEN } from '../../support/server.js';
import { call, startService, type PeopleServer } from './people.js';
import { signInLinkOf, startSmtpReceiver, type SmtpReceiver } from './smtp.js';

/** A service of its own whose e-mail goes to an SMTP receiver of its own; close() stops both. */
export interface MailedService extends PeopleServer {
  smtp: SmtpReceiver;
}

/** startService with SMTP_URL set to a new local SMTP receiver (the tests follow the links it is sent). */
export async function startServiceWithMail(
  config: Parameters<typeof startService>[0] = {},
  appDeps: Parameters<typeof startService>[3] = {},
): Promise<MailedService> {
  const smtp = await startSmtpReceiver();
  let service: PeopleServer;
  try {
    service = await startService({ SMTP_URL: smtp.url, ...config }, undefined, undefined, appDeps);
  } catch (err) {
    await smtp.close();
    throw err;
  }
  return {
    ...service,
    smtp,
    close: async () => {
      try {
        await service.close();
      } finally {
        await smtp.close();
      }
    },
  };
}

const admin = { authorization: `Bearer ${TEST_ADMIN_TOKEN}` };
let counter = 0;
export const unique = (prefix: string) => `${prefix}-${Date.now().toString(36)}-${++counter}`;

/** An organization (operator) with its API key, and a program of it. */
export async function merchantWithProgram(base: string, program: Record<string, unknown> = {}) {
  const org = await call(base, 'POST', '/admin/organizations', { headers: admin, body: { name: unique('Shop') } });
  if (org.status !== 201) throw new Error(`organization: ${org.status} ${JSON.stringify(org.body)}`);
  const key = { authorization: `Bearer ${org.body.data.api_key}` };
  const created = await call(base, 'POST', '/api/programs', {
    headers: key,
    body: { name: 'Partners', commission_value: 20, website_url: 'https://shop.example.com/', ...program },
  });
  if (created.status !== 201) throw new Error(`program: ${created.status} ${JSON.stringify(created.body)}`);
  return {
    organizationId: org.body.data.organization.id as string,
    key,
    program: created.body.data.program as { id: string; hold_days: number },
  };
}

/** A request of the portal's own pages: they send their origin with every state-changing request. */
export const fromPortal = (base: string, cookie?: string) => ({ origin: base, ...(cookie ? { cookie } : {}) });

export async function apply(base: string, organizationId: string, programId: string, body: Record<string, unknown>) {
  return call(base, 'POST', `/partner/api/organizations/${organizationId}/programs/${programId}/applications`, {
    headers: fromPortal(base),
    body: { accept_terms: true, ...body },
  });
}

/** The session cookie (`name=value`) of a sign-in answer. */
export function partnerCookieOf(headers: Headers): string {
  const cookie = headers.getSetCookie().find((c) => c.startsWith('svc.partner_session='));
  if (!cookie) throw new Error(`no partner session cookie in ${JSON.stringify(headers.getSetCookie())}`);
  return cookie.split(';')[0];
}

/** Signs in with the next link e-mailed to `email`; the session cookie. */
export async function signInByMail(base: string, smtp: SmtpReceiver, email: string): Promise<string> {
  const link = signInLinkOf(await smtp.next(email));
  const organizationId = link.pathname.split('/')[2];
  const res = await call(base, 'POST', '/partner/api/sign-in', {
    headers: fromPortal(base),
    body: { organization_id: organizationId, token: link.searchParams.get('token') },
  });
  if (res.status !== 200) throw new Error(`sign-in: ${res.status} ${JSON.stringify(res.body)}`);
  return partnerCookieOf(res.headers);
}

/** A partner who applied to an open program and signed in by the e-mailed link. */
export async function signedInPartner(
  base: string,
  smtp: SmtpReceiver,
  organizationId: string,
  programId: string,
  slug = unique('p'),
) {
  const email = `${slug}@partners.example`;
  const applied = await apply(base, organizationId, programId, { name: `Partner ${slug}`, email, slug });
  if (applied.status !== 201) throw new Error(`apply: ${applied.status} ${JSON.stringify(applied.body)}`);
  const cookie = await signInByMail(base, smtp, email);
  // The application's answer names no membership (it is the same for a partner who already is one): the portal does.
  const me = await call(base, 'GET', '/partner/api/me', { headers: { cookie } });
  const membership = (me.body.data.partner.memberships as { affiliate_id: string; program: { id: string } }[]).find(
    (m) => m.program.id === programId,
  )!;
  return { email, slug, affiliateId: membership.affiliate_id, cookie };
}

/** The membership of `email` in the merchant's program, as the merchant's API lists it. */
export async function affiliateIdOf(
  base: string,
  key: Record<string, string>,
  email: string,
  programId?: string,
): Promise<string> {
  const listed = await call(
    base,
    'GET',
    `/api/affiliates?email=${encodeURIComponent(email)}${programId ? `&program_id=${programId}` : ''}`,
    { headers: key },
  );
  const [affiliate] = listed.body.data.affiliates as { id: string }[];
  if (!affiliate) throw new Error(`no affiliate with e-mail ${email}: ${JSON.stringify(listed.body)}`);
  return affiliate.id;
}
