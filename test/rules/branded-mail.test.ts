import { describe, expect, it } from 'vitest';
import { brandedMail } from '../../server/src/modules/branding/branded-mail.js';
import { addressOf } from '../../server/src/modules/people/mailer.js';

/** The merchant's branding on an e-mail to a partner (server/src/modules/branding/branded-mail.ts). */
const look = {
  organizationName: 'Acme & Sons <Tools>',
  logoUrl: 'https://cdn.acme.example/logo.png?v=1&s=2',
  color: '#0a7c4a',
  senderName: 'Acme Partner Team',
};
const mail = {
  to: 'jane@partners.example',
  subject: 'Welcome <Jane>',
  text: 'Hello <b>Jane</b> & co,\n\nSign in (the link works once): https://aff.example/portal/o/sign-in/link?token=a&b=c.\n\nBye',
};

describe('brandedMail', () => {
  it('keeps the text, sets the sender name, and adds an HTML part with the logo, the colour, escaped words and live links', () => {
    const branded = brandedMail(mail, look);
    expect(branded).toMatchObject({
      to: mail.to,
      subject: mail.subject,
      text: mail.text,
      fromName: 'Acme Partner Team',
    });
    const html = branded.html!;
    expect(html).toContain(
      '<img src="https://cdn.acme.example/logo.png?v=1&amp;s=2" alt="Acme &amp; Sons &lt;Tools&gt;"',
    );
    expect(html).toContain('border-top:6px solid #0a7c4a');
    expect(html).toContain('Hello &lt;b&gt;Jane&lt;/b&gt; &amp; co,');
    expect(html).not.toContain('<b>Jane</b>');
    // The sentence's full stop is not part of the link.
    expect(html).toContain(
      '<a href="https://aff.example/portal/o/sign-in/link?token=a&amp;b=c" style="color:#0a7c4a">https://aff.example/portal/o/sign-in/link?token=a&amp;b=c</a>.',
    );
    expect(html).toContain('<title>Welcome &lt;Jane&gt;</title>');
    expect(html.match(/<p /g)).toHaveLength(3);
  });

  it('without a logo: the name on a header in the accent colour', () => {
    const html = brandedMail(mail, { ...look, logoUrl: null }).html!;
    expect(html).not.toContain('<img');
    expect(html).toContain('background:#0a7c4a');
    expect(html).toContain('>Acme &amp; Sons &lt;Tools&gt;</span>');
  });

  it("the sender name goes with MAIL_FROM's address", () => {
    expect(addressOf('Affiliate program <no-reply@shop.example>')).toBe('no-reply@shop.example');
    expect(addressOf('no-reply@shop.example')).toBe('no-reply@shop.example');
  });
});
