import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMerchant, request } from '../support/api.js';
import { partnerSession } from '../support/partner-session.js';
import { testServer } from '../support/server.js';
import { runImport } from '../imports/import-helpers.js';
import { startRewardfulStandin, type Standin } from '../imports/rewardful-standin.js';

/*
 * A tax form is the partner's (one per e-mail within the organization). A membership created after
 * the partner submitted it (the merchant adding them to another program, the partner applying to
 * one, an import) starts with the partner's current form, not `missing`: its status, kind, dates
 * and reason, and the document the partner uploaded.
 */
type Merchant = Awaited<ReturnType<typeof createMerchant>>;

const PDF = Buffer.concat([
  Buffer.from('%PDF-1.7\n'),
  Buffer.from('Form W-8BEN TIN 98-7654321 '.repeat(30)),
  Buffer.from('\n%%EOF\n'),
]);
const upload = { kind: 'w8ben', file_name: 'w8ben.pdf', content_base64: PDF.toString('base64') };

const SECRET = 'rw-secret-tax-forms';
let standin: Standin;
let importedEmail = '';
beforeAll(async () => {
  importedEmail = `imported-${Date.now()}@example.com`;
  const affiliate = {
    id: 'aff-tax',
    created_at: '2024-01-02T10:00:00.000Z',
    updated_at: '2024-01-02T10:00:00.000Z',
    first_name: 'Ima',
    last_name: 'Ported',
    email: importedEmail,
    paypal_email: null,
    state: 'active',
    visitors: 0,
    leads: 0,
    conversions: 0,
    campaign: { id: 'camp-1', name: 'Main' },
    links: [],
  };
  standin = await startRewardfulStandin(SECRET, {
    affiliates: [affiliate],
    referrals: [],
    payouts: [],
    commissions: [],
  });
  process.env.IMPORT_REWARDFUL_API_BASE_URL = standin.url;
});
afterAll(async () => {
  delete process.env.IMPORT_REWARDFUL_API_BASE_URL;
  await standin.close();
});

async function form(m: Merchant, affiliateId: string) {
  const res = await m.api.get(`/api/affiliates/${affiliateId}`);
  expect(res.status).toBe(200);
  return res.body.data.affiliate.tax_form;
}

async function download(m: Merchant, affiliateId: string) {
  const res = await fetch(`${(await testServer()).baseUrl}/api/affiliates/${affiliateId}/tax-form/document`, {
    headers: { authorization: `Bearer ${m.key}` },
  });
  return { status: res.status, bytes: Buffer.from(await res.arrayBuffer()) };
}

/** A merchant whose partner (the merchant's affiliate) submitted a form, then had it decided by `decide`. */
async function partnerWithForm(decide: 'accept' | 'reject' | 'none') {
  const m = await createMerchant();
  const partner = await partnerSession(m.id, m.affiliate.email);
  expect((await partner.post('/partner/api/tax-form', upload)).status).toBe(201);
  if (decide === 'accept')
    expect((await m.api.post(`/api/affiliates/${m.affiliate.id}/tax-form/accept`)).status).toBe(200);
  if (decide === 'reject')
    expect((await m.api.post(`/api/affiliates/${m.affiliate.id}/tax-form/reject`, { reason: 'Unsigned' })).status).toBe(
      200,
    );
  return { m, partner, current: await form(m, m.affiliate.id) };
}

describe('a membership created after the partner submitted their tax form', () => {
  it('added by the merchant to a program that requires a form: takes the accepted form (state and document) and is not held', async () => {
    const { m, current } = await partnerWithForm('accept');
    expect(current).toEqual({
      status: 'accepted',
      kind: 'w8ben',
      submitted_at: expect.any(String),
      decided_at: expect.any(String),
      rejection_reason: null,
    });
    const strict = (await m.api.post('/api/programs', { name: 'Strict', commission_value: 10, require_tax_form: true }))
      .body.data.program;
    const added = await m.api.post('/api/affiliates', { email: m.affiliate.email, program_id: strict.id });
    expect(added.status).toBe(201);
    const joined = added.body.data.affiliate;
    expect(joined.tax_form).toEqual(current);
    expect((await m.api.get(`/api/affiliates/${joined.id}/tax-form`)).body.data).toEqual({
      affiliate_id: joined.id,
      tax_form: current,
      payout_hold: null,
      uploads_accepted: true,
    });
    expect(await download(m, joined.id)).toEqual({ status: 200, bytes: PDF });

    // Its commissions are paid by the next run, not held as `missing`.
    expect(
      (await m.api.post('/api/commissions', { affiliate_id: joined.id, amount: 9, description: 'earned' })).status,
    ).toBe(201);
    const run = (await m.api.post('/api/payouts', { program_id: strict.id })).body.data;
    expect(run.held).toEqual([]);
    expect(run.payouts).toEqual([expect.objectContaining({ affiliate_id: joined.id, amount: 9 })]);
  });

  it('applying in the portal: takes the rejected form with its reason; the next decision and upload reach it as every other membership', async () => {
    const { m, partner, current } = await partnerWithForm('reject');
    const open = (
      await m.api.post('/api/programs', { name: 'Open', commission_value: 10, signup: 'open', require_tax_form: true })
    ).body.data.program;
    const { baseUrl } = await testServer();
    const applied = await request('POST', `/partner/api/organizations/${m.id}/programs/${open.id}/applications`, {
      headers: { origin: baseUrl },
      body: { name: 'Same Partner', email: m.affiliate.email, slug: `again-${Date.now()}` },
    });
    expect(applied.status, JSON.stringify(applied.body)).toBe(201);
    const joined = (await m.api.get(`/api/affiliates?program_id=${open.id}`)).body.data.affiliates[0];
    expect(joined.tax_form).toEqual({ ...current, status: 'rejected', rejection_reason: 'Unsigned' });
    expect((await m.api.get(`/api/affiliates/${joined.id}/tax-form`)).body.data.payout_hold).toEqual({
      reason: 'tax_form_rejected',
      message: 'Payout held: tax form rejected',
    });
    expect(
      (await partner.get('/partner/api/tax-form')).body.data.holds.map((h: { program_id: string; reason: string }) => [
        h.program_id,
        h.reason,
      ]),
    ).toEqual([[open.id, 'tax_form_rejected']]);

    // Accepting from the new membership accepts the partner's form everywhere.
    expect((await m.api.post(`/api/affiliates/${joined.id}/tax-form/accept`)).status).toBe(200);
    expect((await form(m, m.affiliate.id)).status).toBe('accepted');
    // A new upload replaces the document of every membership, the new one included.
    const png = Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), Buffer.alloc(40, 3)]);
    expect(
      (
        await partner.post('/partner/api/tax-form', {
          kind: 'w9',
          file_name: 'w9.png',
          content_base64: png.toString('base64'),
        })
      ).status,
    ).toBe(201);
    for (const id of [m.affiliate.id, joined.id]) {
      expect(await form(m, id)).toMatchObject({ status: 'submitted', kind: 'w9' });
      expect(await download(m, id)).toEqual({ status: 200, bytes: png });
    }
  });

  it('imported: a partner already here by e-mail brings the submitted form to the imported membership', async () => {
    const m = await createMerchant();
    const here = (await m.api.post('/api/affiliates', { email: importedEmail, program_id: m.program.id })).body.data
      .affiliate;
    const partner = await partnerSession(m.id, importedEmail);
    expect((await partner.post('/partner/api/tax-form', upload)).status).toBe(201);
    const current = await form(m, here.id);
    const target = (await m.api.post('/api/programs', { name: 'Imported', commission_value: 10 })).body.data.program;
    const done = await runImport(m.api, target.id, 'rewardful', { api_secret: SECRET });
    expect(done.status, done.error).toBe('succeeded');
    expect(done.counts.affiliates).toEqual({ created: 1, already_present: 0, skipped: 0 });
    const imported = (await m.api.get(`/api/affiliates?program_id=${target.id}`)).body.data.affiliates[0];
    expect(imported.email).toBe(importedEmail);
    expect(imported.tax_form).toEqual({
      status: 'submitted',
      kind: 'w8ben',
      submitted_at: current.submitted_at,
      decided_at: null,
      rejection_reason: null,
    });
    expect(await download(m, imported.id)).toEqual({ status: 200, bytes: PDF });
  });

  it('another e-mail, and a partner who never submitted, still start at missing, with no document', async () => {
    const { m } = await partnerWithForm('accept');
    const stranger = (
      await m.api.post('/api/affiliates', { email: `stranger-${Date.now()}@example.com`, program_id: m.program.id })
    ).body.data.affiliate;
    expect(stranger.tax_form).toEqual({
      status: 'missing',
      kind: null,
      submitted_at: null,
      decided_at: null,
      rejection_reason: null,
    });
    expect((await download(m, stranger.id)).status).toBe(404);
  });
});
