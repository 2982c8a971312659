import { describe, expect, it } from 'vitest';
import { Db } from '../../server/src/db/sql.js';
import { createMerchant, createOrganization, expectError, request } from '../support/api.js';
import { partnerSession } from '../support/partner-session.js';
import { testServer } from '../support/server.js';
import { sql } from 'kysely';

/**
 * Tax forms (shared/spec/payout-rails.md, "Partners"): the partner uploads a W-9 / W-8BEN /
 * W-8BEN-E in the portal, stored encrypted; the merchant reads and decides on it; a program with
 * `require_tax_form` pays no one whose form is not accepted.
 */

type Merchant = Awaited<ReturnType<typeof createMerchant>>;

const PDF = Buffer.concat([
  Buffer.from('%PDF-1.7\n1 0 obj << /Type /Catalog >> endobj\n'),
  Buffer.from('Form W-9 TIN 123-45-6789 '.repeat(40)),
  Buffer.from('\n%%EOF\n'),
]);
const PNG = Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), Buffer.alloc(64, 7)]);
const upload = (document: Buffer, over: Record<string, unknown> = {}) => ({
  kind: 'w9',
  file_name: 'w9-signed.pdf',
  content_base64: document.toString('base64'),
  ...over,
});
const MISSING = { status: 'missing', kind: null, submitted_at: null, decided_at: null, rejection_reason: null };

async function storedDocuments(
  organizationId: string,
): Promise<{ affiliate_id: string; document: Buffer; size_bytes: number; content_type: string }[]> {
  const { db } = await testServer();
  return Db.of(db.orm).rows(
    sql`select affiliate_id, document, size_bytes, content_type from tax_forms where organization_id = ${organizationId} order by affiliate_id`,
  );
}

async function adjust(m: Merchant, amount: number, affiliateId = m.affiliate.id) {
  const res = await m.api.post('/api/commissions', {
    affiliate_id: affiliateId,
    amount,
    description: `adjustment ${amount}`,
  });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body.data.commission;
}

describe('the partner submits a tax form in the portal', () => {
  it('a PDF is stored encrypted (not the plain bytes), shown as submitted on both sides, and downloaded as uploaded', async () => {
    const m = await createMerchant();
    const partner = await partnerSession(m.id, m.affiliate.email);
    expect((await partner.get('/partner/api/tax-form')).body).toEqual({
      success: true,
      data: { tax_form: MISSING, required: false, holds: [], uploads_accepted: true },
    });

    const submitted = await partner.post('/partner/api/tax-form', upload(PDF));
    expect(submitted.status, JSON.stringify(submitted.body)).toBe(201);
    const form = {
      status: 'submitted',
      kind: 'w9',
      submitted_at: expect.any(String),
      decided_at: null,
      rejection_reason: null,
    };
    expect(submitted.body).toEqual({
      success: true,
      data: { tax_form: form, required: false, holds: [], uploads_accepted: true },
    });

    // At rest: AES-256-GCM ciphertext, neither the PDF nor any of its text.
    const [stored] = await storedDocuments(m.id);
    expect(stored).toMatchObject({
      affiliate_id: m.affiliate.id,
      size_bytes: PDF.length,
      content_type: 'application/pdf',
    });
    expect(stored.document.equals(PDF)).toBe(false);
    expect(stored.document.includes(Buffer.from('%PDF'))).toBe(false);
    expect(stored.document.includes(Buffer.from('123-45-6789'))).toBe(false);
    expect(stored.document.length).toBe(PDF.length + 1 + 12 + 16);

    // The merchant sees the status on the affiliate and downloads the very bytes.
    expect((await m.api.get(`/api/affiliates/${m.affiliate.id}`)).body.data.affiliate.tax_form).toEqual(form);
    expect((await m.api.get(`/api/affiliates/${m.affiliate.id}/tax-form`)).body).toEqual({
      success: true,
      data: { affiliate_id: m.affiliate.id, tax_form: form, payout_hold: null, uploads_accepted: true },
    });
    const { baseUrl } = await testServer();
    const download = await fetch(`${baseUrl}/api/affiliates/${m.affiliate.id}/tax-form/document`, {
      headers: { authorization: `Bearer ${m.key}` },
    });
    expect(download.status).toBe(200);
    expect(download.headers.get('content-type')).toBe('application/pdf');
    expect(download.headers.get('content-disposition')).toBe(
      `attachment; filename="w9-signed.pdf"; filename*=UTF-8''w9-signed.pdf`,
    );
    expect(download.headers.get('cache-control')).toBe('no-store');
    expect(Buffer.from(await download.arrayBuffer()).equals(PDF)).toBe(true);
  });

  it('a PNG and a JPEG are taken by their first bytes; anything else is 400, whatever its name says', async () => {
    const m = await createMerchant();
    const partner = await partnerSession(m.id, m.affiliate.email);
    expect(
      (await partner.post('/partner/api/tax-form', upload(PNG, { kind: 'w8ben', file_name: 'scan.png' }))).status,
    ).toBe(201);
    expect((await storedDocuments(m.id))[0].content_type).toBe('image/png');
    const jpeg = Buffer.concat([Buffer.from([0xff, 0xd8, 0xff, 0xe0]), Buffer.alloc(32, 1)]);
    expect(
      (await partner.post('/partner/api/tax-form', upload(jpeg, { kind: 'w8bene', file_name: 'scan.jpg' }))).body.data
        .tax_form,
    ).toMatchObject({ status: 'submitted', kind: 'w8bene' });
    expect((await storedDocuments(m.id))[0].content_type).toBe('image/jpeg');

    expectError(
      await partner.post('/partner/api/tax-form', upload(Buffer.from('just some text, named .pdf'))),
      400,
      'content_base64: not a PDF, PNG or JPEG file',
    );
    expectError(
      await partner.post('/partner/api/tax-form', upload(Buffer.from('<html>%PDF-1.7</html>'))),
      400,
      'content_base64: not a PDF, PNG or JPEG file',
    );
    expectError(
      await partner.post('/partner/api/tax-form', { ...upload(PDF), content_base64: 'not base64 at all!' }),
      400,
      'content_base64: not valid base64',
    );
    expectError(await partner.post('/partner/api/tax-form', upload(PDF, { kind: 'w4' })), 400, /^kind: /);
    expectError(await partner.post('/partner/api/tax-form', upload(PDF, { file_name: '' })), 400, /^file_name: /);
    // Nothing of the refused uploads replaced the JPEG.
    expect((await storedDocuments(m.id))[0].content_type).toBe('image/jpeg');
  });

  it('a document over 10 MiB is 413, and so is a body over the route limit; nothing is stored', async () => {
    const m = await createMerchant();
    const partner = await partnerSession(m.id, m.affiliate.email);
    const tooBig = Buffer.concat([PDF, Buffer.alloc(10 * 1024 * 1024 + 1 - PDF.length, 0x20)]);
    expectError(
      await partner.post('/partner/api/tax-form', upload(tooBig)),
      413,
      'content_base64: the document is larger than 10 MiB',
    );
    const farTooBig = Buffer.concat([PDF, Buffer.alloc(11 * 1024 * 1024, 0x20)]);
    expectError(
      await partner.post('/partner/api/tax-form', upload(farTooBig)),
      413,
      /^Request body exceeds the 13.4 MiB limit of this route$/,
    );
    // Exactly 10 MiB is fine.
    const justFits = Buffer.concat([PDF, Buffer.alloc(10 * 1024 * 1024 - PDF.length, 0x20)]);
    const fits = await partner.post('/partner/api/tax-form', upload(justFits));
    expect(fits.status, JSON.stringify(fits.body).slice(0, 200)).toBe(201);
    expect((await storedDocuments(m.id)).map((d) => d.size_bytes)).toEqual([10 * 1024 * 1024]);
    // Other routes keep the 1 MiB JSON limit.
    expectError(
      await m.api.patch(`/api/affiliates/${m.affiliate.id}`, { name: 'x'.repeat(1024 * 1024 + 10) }),
      413,
      'Request body exceeds the 1 MiB limit',
    );
  }, 60_000);

  it('needs a session, and a request from the portal itself', async () => {
    const m = await createMerchant();
    expectError(await request('GET', '/partner/api/tax-form'), 401);
    expectError(await request('POST', '/partner/api/tax-form', { body: upload(PDF) }), 401);
    const partner = await partnerSession(m.id, m.affiliate.email);
    const crossSite = await request('POST', '/partner/api/tax-form', {
      headers: { cookie: partner.cookie, origin: 'https://evil.example' },
      body: upload(PDF),
    });
    expect(crossSite.status).toBe(403);
    expect(await storedDocuments(m.id)).toEqual([]);
  });
});

describe('the merchant reviews it', () => {
  it('reject with a reason (the partner reads it), a resubmission replaces it, accept; 409 without a form', async () => {
    const m = await createMerchant();
    const partner = await partnerSession(m.id, m.affiliate.email);
    expectError(
      await m.api.post(`/api/affiliates/${m.affiliate.id}/tax-form/accept`),
      409,
      'No tax form submitted: the partner uploads one in the portal',
    );
    expectError(
      await m.api.post(`/api/affiliates/${m.affiliate.id}/tax-form/reject`, { reason: 'x' }),
      409,
      'No tax form submitted: the partner uploads one in the portal',
    );
    const notFound = await fetch(`${(await testServer()).baseUrl}/api/affiliates/${m.affiliate.id}/tax-form/document`, {
      headers: { authorization: `Bearer ${m.key}` },
    });
    expect(notFound.status).toBe(404);
    expect(await notFound.json()).toEqual({ success: false, message: 'No tax form on file' });

    await partner.post('/partner/api/tax-form', upload(PDF));
    expectError(await m.api.post(`/api/affiliates/${m.affiliate.id}/tax-form/reject`, {}), 400, /^reason: /);
    const rejected = await m.api.post(`/api/affiliates/${m.affiliate.id}/tax-form/reject`, {
      reason: '  The TIN is missing  ',
    });
    expect(rejected.status).toBe(200);
    expect(rejected.body.data.tax_form).toEqual({
      status: 'rejected',
      kind: 'w9',
      submitted_at: expect.any(String),
      decided_at: expect.any(String),
      rejection_reason: 'The TIN is missing',
    });
    expect((await partner.get('/partner/api/tax-form')).body.data.tax_form).toMatchObject({
      status: 'rejected',
      rejection_reason: 'The TIN is missing',
    });

    const again = await partner.post(
      '/partner/api/tax-form',
      upload(PNG, { kind: 'w8ben', file_name: 'corrected.png' }),
    );
    expect(again.body.data.tax_form).toEqual({
      status: 'submitted',
      kind: 'w8ben',
      submitted_at: expect.any(String),
      decided_at: null,
      rejection_reason: null,
    });
    expect((await storedDocuments(m.id)).map((d) => d.content_type)).toEqual(['image/png']);

    const accepted = await m.api.post(`/api/affiliates/${m.affiliate.id}/tax-form/accept`);
    expect(accepted.body.data.tax_form).toMatchObject({
      status: 'accepted',
      kind: 'w8ben',
      rejection_reason: null,
      decided_at: expect.any(String),
    });
    // Accepting again changes nothing.
    expect((await m.api.post(`/api/affiliates/${m.affiliate.id}/tax-form/accept`)).body).toEqual(accepted.body);
    expect((await m.api.get(`/api/affiliates/${m.affiliate.id}`)).body.data.affiliate.tax_form).toEqual(
      accepted.body.data.tax_form,
    );
  });

  it("another organization's affiliate is 403, an unknown one 404, for every tax form route", async () => {
    const m = await createMerchant();
    const partner = await partnerSession(m.id, m.affiliate.email);
    await partner.post('/partner/api/tax-form', upload(PDF));
    const other = await createOrganization();
    const { baseUrl } = await testServer();
    for (const id of [m.affiliate.id, '00000000-0000-4000-8000-000000000000']) {
      const status = id === m.affiliate.id ? 403 : 404;
      expectError(await other.api.get(`/api/affiliates/${id}/tax-form`), status);
      expectError(await other.api.post(`/api/affiliates/${id}/tax-form/accept`), status);
      expectError(await other.api.post(`/api/affiliates/${id}/tax-form/reject`, { reason: 'no' }), status);
      const download = await fetch(`${baseUrl}/api/affiliates/${id}/tax-form/document`, {
        headers: { authorization: `Bearer ${other.key}` },
      });
      expect(download.status).toBe(status);
      expect(download.headers.get('content-type')).toMatch(/^application\/json/);
    }
    expect((await m.api.get(`/api/affiliates/${m.affiliate.id}`)).body.data.affiliate.tax_form.status).toBe(
      'submitted',
    );
  });

  it("a form is the partner's: submitted and decided once for every program of their e-mail", async () => {
    const m = await createMerchant();
    const second = await m.api.post('/api/programs', { name: 'Second', commission_value: 10 });
    const membership = await m.api.post('/api/affiliates', {
      email: m.affiliate.email,
      program_id: second.body.data.program.id,
    });
    const partner = await partnerSession(m.id, m.affiliate.email);
    await partner.post('/partner/api/tax-form', upload(PDF));
    const docs = await storedDocuments(m.id);
    expect(docs.map((d) => d.affiliate_id).sort()).toEqual([m.affiliate.id, membership.body.data.affiliate.id].sort());
    // Each row sealed on its own (own IV, bound to its membership).
    expect(docs[0].document.equals(docs[1].document)).toBe(false);
    await m.api.post(`/api/affiliates/${m.affiliate.id}/tax-form/accept`);
    expect(
      (await m.api.get(`/api/affiliates/${membership.body.data.affiliate.id}`)).body.data.affiliate.tax_form.status,
    ).toBe('accepted');
  });

  it("erasing the partner's personal details deletes the document", async () => {
    const m = await createMerchant();
    const partner = await partnerSession(m.id, m.affiliate.email);
    await partner.post('/partner/api/tax-form', upload(PDF));
    expect(await storedDocuments(m.id)).toHaveLength(1);
    const erased = await m.api.post(`/api/affiliates/${m.affiliate.id}/erase`);
    expect(erased.status).toBe(200);
    expect(erased.body.data.affiliate.tax_form).toEqual(MISSING);
    expect(await storedDocuments(m.id)).toEqual([]);
    const download = await fetch(`${(await testServer()).baseUrl}/api/affiliates/${m.affiliate.id}/tax-form/document`, {
      headers: { authorization: `Bearer ${m.key}` },
    });
    expect(download.status).toBe(404);
  });
});

describe('require_tax_form holds payouts', () => {
  it('creates no payout until the form is accepted, says why on both sides, then pays what was held', async () => {
    const m = await createMerchant({ require_tax_form: true });
    expect(m.program.require_tax_form).toBe(true);
    const entry = await adjust(m, 25);
    const partner = await partnerSession(m.id, m.affiliate.email);

    const run = async () => {
      const res = await m.api.post('/api/payouts', {});
      expect(res.status, JSON.stringify(res.body)).toBe(201);
      return res.body.data;
    };
    const held = (reason: string) => ({
      affiliate_id: m.affiliate.id,
      program_id: m.program.id,
      currency: 'USD',
      amount: 25,
      commission_count: 1,
      reason,
      message: `Payout held: tax form ${reason.slice(9)}`,
    });

    expect(await run()).toEqual({ payouts: [], held: [held('tax_form_missing')] });
    expect((await m.api.get(`/api/commissions/${entry.id}`)).body.data.commission).toMatchObject({
      status: 'approved',
      payout_id: null,
    });
    expect((await m.api.get(`/api/affiliates/${m.affiliate.id}/tax-form`)).body.data.payout_hold).toEqual({
      reason: 'tax_form_missing',
      message: 'Payout held: tax form missing',
    });
    expect((await partner.get('/partner/api/tax-form')).body.data).toEqual({
      tax_form: MISSING,
      required: true,
      holds: [
        {
          program_id: m.program.id,
          program_name: 'Main',
          reason: 'tax_form_missing',
          message:
            'Main pays you once your tax form is accepted: upload a W-9 (US persons) or a W-8BEN / W-8BEN-E (outside the US).',
        },
      ],
      uploads_accepted: true,
    });

    // The balance says so too, in place of "paid in the merchant's next payout".
    const balance = (await partner.get('/partner/api/payouts')).body.data.balances[0];
    expect(balance).toMatchObject({
      approved: 25,
      next_payout: { state: 'due' },
      payout_hold: {
        reason: 'tax_form_missing',
        message: expect.stringContaining('Main pays you once your tax form is accepted'),
      },
    });

    await partner.post('/partner/api/tax-form', upload(PDF));
    expect(await run()).toEqual({ payouts: [], held: [held('tax_form_submitted')] });
    expect((await partner.get('/partner/api/tax-form')).body.data.holds[0].message).toBe(
      "Your tax form is waiting for the merchant's review: payouts in Main are held until it is accepted.",
    );

    await m.api.post(`/api/affiliates/${m.affiliate.id}/tax-form/reject`, { reason: 'Unsigned' });
    expect(await run()).toEqual({ payouts: [], held: [held('tax_form_rejected')] });
    expect((await partner.get('/partner/api/tax-form')).body.data.holds[0].message).toBe(
      'Your tax form was rejected (Unsigned): upload a corrected one. Payouts in Main are held until it is accepted.',
    );

    await m.api.post(`/api/affiliates/${m.affiliate.id}/tax-form/accept`);
    expect((await m.api.get(`/api/affiliates/${m.affiliate.id}/tax-form`)).body.data.payout_hold).toBeNull();
    const paid = await run();
    expect(paid.held).toEqual([]);
    expect(paid.payouts).toEqual([
      expect.objectContaining({ affiliate_id: m.affiliate.id, amount: 25, commission_count: 1, status: 'pending' }),
    ]);
    expect((await partner.get('/partner/api/tax-form')).body.data.holds).toEqual([]);
    expect((await partner.get('/partner/api/payouts')).body.data.balances[0].payout_hold).toBeNull();
  });

  it('holds only the affiliates without an accepted form, only in programs that require one', async () => {
    const m = await createMerchant({ require_tax_form: true });
    const free = await m.api.post('/api/programs', { name: 'No forms', commission_value: 10 });
    const elsewhere = await m.api.post('/api/affiliates', {
      email: m.affiliate.email,
      program_id: free.body.data.program.id,
    });
    const accepted = await m.api.post('/api/affiliates', {
      email: `ok-${Date.now()}@example.com`,
      program_id: m.program.id,
    });
    await adjust(m, 10);
    await adjust(m, 7, elsewhere.body.data.affiliate.id);
    await adjust(m, 3, accepted.body.data.affiliate.id);
    const okPartner = await partnerSession(m.id, accepted.body.data.affiliate.email);
    await okPartner.post('/partner/api/tax-form', upload(PDF));
    await m.api.post(`/api/affiliates/${accepted.body.data.affiliate.id}/tax-form/accept`);

    const res = await m.api.post('/api/payouts', {});
    expect(
      res.body.data.payouts.map((p: { affiliate_id: string; amount: number }) => [p.affiliate_id, p.amount]).sort(),
    ).toEqual(
      [
        [elsewhere.body.data.affiliate.id, 7],
        [accepted.body.data.affiliate.id, 3],
      ].sort(),
    );
    expect(res.body.data.held.map((h: { affiliate_id: string; reason: string }) => [h.affiliate_id, h.reason])).toEqual(
      [[m.affiliate.id, 'tax_form_missing']],
    );
    // Turning the rule off releases them on the next run.
    await m.api.patch(`/api/programs/${m.program.id}`, { require_tax_form: false });
    const next = await m.api.post('/api/payouts', {});
    expect(next.body.data).toEqual({
      payouts: [expect.objectContaining({ affiliate_id: m.affiliate.id, amount: 10 })],
      held: [],
    });
  });

  it('a held group under the minimum payout is not listed (it would not be paid anyway)', async () => {
    const m = await createMerchant({ require_tax_form: true, minimum_payout: 50 });
    await adjust(m, 20);
    expect((await m.api.post('/api/payouts', {})).body.data).toEqual({ payouts: [], held: [] });
  });
});
