import { useState } from 'react';
import { BRANDING_DEFAULT_COLOR, type Branding as BrandingView } from '@affiliate-attribution/contract';
import { api, data } from '../api';
import { Field, FormError, Loading, PageHeader, useLoad, useSubmit } from '../ui';

const FIELDS = ['logo_url', 'brand_color', 'sender_name'];

/** Empty means "not set" (null): the defaults apply (the organization's name, the default colour). */
const orNull = (v: string) => (v.trim() === '' ? null : v.trim());

/**
 * The merchant's branding (issue 47, item 10): the logo, accent colour and sender name that the
 * partner portal and every e-mail to partners show. The service validates each field and its
 * message lands next to it.
 */
export function Branding() {
  const current = useLoad(async () => data(await api.branding.get()).branding, []);
  return (
    <section>
      <PageHeader title="Branding" />
      <p className="muted">
        How your partners see you: the partner portal&apos;s header and buttons, and the e-mails they get from you
        (applications, sign-in links, commissions, payouts). The same in test and live mode.
      </p>
      <FormError error={current.error} />
      {current.data ? <BrandingForm branding={current.data} onSaved={current.reload} /> : !current.error && <Loading />}
    </section>
  );
}

function BrandingForm({ branding, onSaved }: { branding: BrandingView; onSaved: () => void }) {
  const [logo, setLogo] = useState(branding.logo_url ?? '');
  const [color, setColor] = useState(branding.brand_color ?? '');
  const [sender, setSender] = useState(branding.sender_name ?? '');
  const [saved, setSaved] = useState(false);
  const save = useSubmit(
    async () =>
      data(
        await api.branding.update({
          body: { logo_url: orNull(logo), brand_color: orNull(color), sender_name: orNull(sender) },
        }),
      ).branding,
    () => {
      setSaved(true);
      onSaved();
    },
  );
  const shown = /^#[0-9a-fA-F]{6}$/.test(color.trim()) ? color.trim() : BRANDING_DEFAULT_COLOR;
  const change = (set: (v: string) => void) => (v: string) => (setSaved(false), set(v));
  return (
    <form className="card stacked-form" onSubmit={save.submit} noValidate aria-label="Branding">
      <Field
        label="Logo URL"
        name="logo_url"
        type="url"
        value={logo}
        onChange={change(setLogo)}
        error={save.error}
        placeholder="https://your-site.example/logo.png"
        hint="An https address of your logo (PNG, SVG or JPEG, about 48 px high). Empty: your name is shown."
      />
      <Field
        label="Accent colour"
        name="brand_color"
        value={color}
        onChange={change(setColor)}
        error={save.error}
        placeholder={BRANDING_DEFAULT_COLOR}
        hint={`As #rrggbb, e.g. #0a7c4a. Empty: ${BRANDING_DEFAULT_COLOR}. White text sits on it: choose a dark enough one.`}
      />
      <Field
        label="E-mail sender name"
        name="sender_name"
        value={sender}
        onChange={change(setSender)}
        error={save.error}
        hint="The name partners see e-mails from (no line breaks or < >). Empty: your organization's name."
      />
      <p className="small muted" data-testid="brand-preview">
        <span className="swatch" style={{ background: shown }} aria-hidden="true" /> The accent colour: {shown}
      </p>
      <div className="actions">
        <button type="submit" disabled={save.busy}>
          {save.busy ? 'Saving…' : 'Save'}
        </button>
      </div>
      <FormError error={save.error} fields={FIELDS} />
      {saved && <p role="status">Saved: the portal and your next e-mails to partners use it.</p>}
    </form>
  );
}
