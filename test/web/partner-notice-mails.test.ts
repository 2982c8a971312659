import { describe, expect, it } from 'vitest';
import { commissionEarnedMail } from '../../server/src/modules/partners/partner-notice-mails.js';

/** The commission e-mail's words (issue 47, item 10): what the partner learns of its hold. */
describe('the commission earned e-mail', () => {
  const program = { merchant: 'Shop', program: 'Friends' };
  const links = { baseUrl: 'https://aff.example.com/', organizationId: 'org-1' };
  const notice = { to: 'ada@partners.example', name: 'Ada', amount: '20.00 USD', description: null };

  it('a pending commission gives the day its hold ends; an approved one says it goes into the next payout', () => {
    const pending = commissionEarnedMail(
      { ...notice, status: 'pending', approvesAt: new Date(Date.now() + 30 * 86_400_000) },
      program,
      links,
    );
    const day = new Date(Date.now() + 30 * 86_400_000).toISOString().slice(0, 10);
    expect(pending.text).toContain(`It is pending until ${day} (the program's hold)`);
    const approved = commissionEarnedMail({ ...notice, status: 'approved', approvesAt: null }, program, links);
    expect(approved.text).toContain('It is approved and goes into your next payout.');
    expect(approved.text.endsWith('Your partner portal: https://aff.example.com/portal/org-1')).toBe(true);
    expect(approved.subject).toBe('You earned a 20.00 USD commission with Shop');
  });
});
