import { describe, expect, it } from 'vitest';
import { parse } from 'csv-parse/sync';
import { MAX_ROWS_PER_FILE, payoutFile, type PayoutFileRow } from '../../server/src/modules/payouts/payout-files.js';

const row = (over: Partial<PayoutFileRow> = {}): PayoutFileRow => ({
  id: '0b7d4c3e-5f1a-4d2b-9c8e-7a6b5c4d3e2f',
  affiliate_id: '11111111-1111-4111-8111-111111111111',
  program_id: '22222222-2222-4222-8222-222222222222',
  name: 'Jane Doe',
  email: 'jane@example.com',
  payout_email: 'jane.pay@example.com',
  amount: '100.5',
  currency: 'USD',
  commission_count: 3,
  status: 'pending',
  reference: null,
  created_at: '2026-11-01T00:00:00.000Z',
  paid_at: null,
  ...over,
});

describe('payout files', () => {
  it('PayPal: no header, the six columns in order, one line per payout', () => {
    const text = payoutFile('paypal', [
      row(),
      row({ id: '3c3c3c3c-0000-4000-8000-000000000001', payout_email: null, amount: '7' }),
    ]);
    const lines = parse(text);
    expect(lines).toEqual([
      [
        'jane.pay@example.com',
        '100.50',
        'USD',
        '0b7d4c3e5f1a4d2b9c8e7a6b5c4d3e',
        'Affiliate commissions, payout 0b7d4c3e-5f1a-4d2b-9c8e-7a6b5c4d3e2f',
        'PAYPAL',
      ],
      // No payout e-mail: the affiliate's own.
      [
        'jane@example.com',
        '7.00',
        'USD',
        '3c3c3c3c0000400080000000000000',
        'Affiliate commissions, payout 3c3c3c3c-0000-4000-8000-000000000001',
        'PAYPAL',
      ],
    ]);
    expect(lines[0][3].length).toBeLessThanOrEqual(30);
  });

  it('PayPal: one currency per file, refused with the currencies named', () => {
    expect(() => payoutFile('paypal', [row(), row({ currency: 'EUR' })])).toThrow(/one currency per file.*EUR, USD/);
  });

  it("amounts carry the currency's minor unit: none for JPY, three for BHD", () => {
    const lines = parse<Record<string, string>>(
      payoutFile('csv', [row({ currency: 'JPY', amount: '1500' }), row({ currency: 'BHD', amount: '1.5' })]),
      { columns: true },
    );
    expect(lines.map((l) => l.amount)).toEqual(['1500', '1.500']);
  });

  it("Wise: the 'send by email' header unchanged, the partner receives the exact amount", () => {
    const [header, ...rest] = parse(payoutFile('wise', [row({ name: null })]));
    expect(header).toEqual([
      'name',
      'recipientEmail',
      'paymentReference',
      'receiverType',
      'amountCurrency',
      'amount',
      'sourceCurrency',
      'targetCurrency',
    ]);
    expect(rest).toEqual([
      ['jane.pay@example.com', 'jane.pay@example.com', 'Payout 0b7d4c3e', 'PERSON', 'target', '100.50', 'USD', 'USD'],
    ]);
  });

  it('plain CSV: every field with a header, quoting commas and quotes', () => {
    const text = payoutFile('csv', [
      row({ name: 'Doe, "Jane"', reference: 'PP-123', paid_at: '2026-11-02T00:00:00.000Z', status: 'paid' }),
    ]);
    const [line] = parse<Record<string, string>>(text, { columns: true });
    expect(line).toEqual({
      payout_id: '0b7d4c3e-5f1a-4d2b-9c8e-7a6b5c4d3e2f',
      affiliate_id: '11111111-1111-4111-8111-111111111111',
      program_id: '22222222-2222-4222-8222-222222222222',
      name: 'Doe, "Jane"',
      payout_email: 'jane.pay@example.com',
      amount: '100.50',
      currency: 'USD',
      commission_count: '3',
      status: 'paid',
      reference: 'PP-123',
      created_at: '2026-11-01T00:00:00.000Z',
      paid_at: '2026-11-02T00:00:00.000Z',
    });
  });

  it('a name a spreadsheet would run as a formula is made inert', () => {
    const [line] = parse<Record<string, string>>(payoutFile('csv', [row({ name: '=HYPERLINK("http://x")' })]), {
      columns: true,
    });
    expect(line.name).toBe(`'=HYPERLINK("http://x")`);
    const [, wise] = parse(payoutFile('wise', [row({ name: '+1 evil' })]));
    expect(wise[0]).toBe("'+1 evil");
  });

  it("more payouts than the provider's file takes: a 400 asking to narrow the export", () => {
    const many = Array.from({ length: MAX_ROWS_PER_FILE.wise + 1 }, () => row());
    expect(() => payoutFile('wise', many)).toThrow(/at most 1000 payouts and 1001 match/);
    expect(() => payoutFile('paypal', many)).not.toThrow();
  });

  it('no payouts: PayPal an empty file, Wise and CSV just their header', () => {
    expect(payoutFile('paypal', [])).toBe('');
    expect(payoutFile('wise', [])).toBe(
      'name,recipientEmail,paymentReference,receiverType,amountCurrency,amount,sourceCurrency,targetCurrency\n',
    );
    expect(payoutFile('csv', []).split('\n')[0]).toMatch(/^payout_id,affiliate_id/);
  });
});
