import type { Mail } from '../people/mailer.js';
import type { BrandingLook } from './branding.js';

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };
const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (c) => ESCAPES[c]);

/** A URL in the text, up to whitespace; a trailing full stop, comma or closing parenthesis is the sentence's. */
const URL_PATTERN = /https?:\/\/[^\s<>"]+?(?=[.,;:)]?(?:\s|$))/g;

/** One paragraph of the text as HTML: escaped, links clickable in the accent colour, line breaks kept. */
function paragraph(text: string, color: string): string {
  let html = '';
  let last = 0;
  for (const match of text.matchAll(URL_PATTERN)) {
    const url = match[0];
    html += escapeHtml(text.slice(last, match.index));
    html += `<a href="${escapeHtml(url)}" style="color:${color}">${escapeHtml(url)}</a>`;
    last = match.index + url.length;
  }
  html += escapeHtml(text.slice(last));
  return `<p style="margin:0 0 16px">${html.replace(/\n/g, '<br>')}</p>`;
}

/**
 * An e-mail to a partner in the merchant's branding (issue 47, item 10): from their sender name,
 * with an HTML part beside the text (the same words) under a header in their accent colour with
 * their logo, or their name when they set no logo. The colour and logo were validated when saved
 * (#rrggbb, https: modules/branding, and the database's checks); everything else is escaped.
 */
export function brandedMail(mail: Mail, look: BrandingLook): Mail {
  const color = look.color;
  const header = look.logoUrl
    ? `<img src="${escapeHtml(look.logoUrl)}" alt="${escapeHtml(look.organizationName)}" style="max-height:48px;max-width:240px;display:block">`
    : `<span style="color:#ffffff;font-size:18px;font-weight:bold">${escapeHtml(look.organizationName)}</span>`;
  const headerStyle = look.logoUrl
    ? `padding:16px 24px;border-top:6px solid ${color};border-bottom:1px solid #e5e7eb`
    : `padding:16px 24px;background:${color}`;
  const body = mail.text
    .split(/\n{2,}/)
    .map((p) => paragraph(p, color))
    .join('\n');
  const html = `<!doctype html>
<html><head><meta charset="utf-8"><title>${escapeHtml(mail.subject)}</title></head>
<body style="margin:0;padding:24px;background:#f3f4f6;font-family:-apple-system,Segoe UI,Helvetica,Arial,sans-serif;color:#111827">
<table role="presentation" width="100%" cellpadding="0" cellspacing="0" style="max-width:600px;margin:0 auto;background:#ffffff;border-radius:8px">
<tr><td style="${headerStyle}">${header}</td></tr>
<tr><td style="padding:24px;font-size:15px;line-height:1.5">
${body}
</td></tr>
</table>
</body></html>`;
  return { ...mail, fromName: look.senderName, html };
}
