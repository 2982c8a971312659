import { useState } from 'react';
import type { Affiliate } from '@affiliate-attribution/contract';
import { api, data } from '../api';
import { CopyButton, Field, FormError, useSubmit } from '../ui';

/** One affiliate with its aliases, as GET and PATCH /api/affiliates/{id} answer. */
export interface AffiliateWithAliases {
  affiliate: Affiliate;
  aliases: string[];
}

/**
 * The partner's referral link, their slug changed in place (PATCH /api/affiliates/{id} `slug`: the
 * old one stays an alias, so links already published keep paying), and their aliases: the other
 * `?ref=` tokens that credit them.
 */
export function ReferralSlug({
  affiliate,
  aliases,
  link,
  onSaved,
}: {
  affiliate: Affiliate;
  aliases: string[];
  /** The full link on the merchant's site, when one is known. */
  link?: string;
  onSaved: (saved: AffiliateWithAliases) => void;
}) {
  const [editing, setEditing] = useState(false);
  const [value, setValue] = useState('');
  const save = useSubmit(
    async () => data(await api.affiliates.update({ params: { id: affiliate.id }, body: { slug: value.trim() } })),
    (saved) => {
      setEditing(false);
      onSaved(saved);
    },
  );
  return (
    <>
      {link ? (
        <>
          <code data-testid="referral-link" className="break">
            {link}
          </code>{' '}
          <CopyButton text={link} />
        </>
      ) : (
        <code data-testid="referral-slug">?ref={affiliate.slug}</code>
      )}{' '}
      {!editing && (
        <button
          type="button"
          className="secondary small"
          onClick={() => {
            setValue(affiliate.slug);
            save.setError(undefined);
            setEditing(true);
          }}
        >
          Change the slug
        </button>
      )}
      {editing && (
        <form className="inline-form" onSubmit={save.submit} noValidate>
          <Field
            label="New slug"
            name="slug"
            value={value}
            onChange={(v) => setValue(v.toLowerCase())}
            error={save.error}
            hint={`2 to 64 lowercase letters, digits or "-". "${affiliate.slug}" keeps working as an alias.`}
          />
          <button type="submit" className="small" disabled={save.busy}>
            Save<span className="visually-hidden"> slug</span>
          </button>
          <button type="button" className="secondary small" onClick={() => setEditing(false)}>
            Cancel
          </button>
          <FormError error={save.error} fields={['slug']} />
        </form>
      )}
      {aliases.length > 0 && (
        <p className="muted small" data-testid="aliases">
          Also credited through {aliases.length === 1 ? 'the alias' : 'the aliases'}{' '}
          {aliases.map((alias, i) => (
            <span key={alias}>
              {i > 0 && ', '}
              <code className="break">?ref={alias}</code>
            </span>
          ))}
          : links the partner published before keep paying.
        </p>
      )}
    </>
  );
}
