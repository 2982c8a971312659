import type { Program } from '@affiliate-attribution/contract';
import { useSession } from '../App';
import type { ApiError } from '../api';
import { CopyButton, Field } from '../ui';
import './partners.css';

/** The program fields of the partner portal, as the program form edits them (pages/Programs.tsx). */
export type JoiningDraft = { signup: string; terms: string; website_url: string };

export const joiningDraftOf = (p?: Program): JoiningDraft => ({
  signup: p?.signup ?? 'approval',
  terms: p?.terms ?? '',
  website_url: p?.website_url ?? '',
});

export const joiningBodyOf = (d: JoiningDraft) => ({
  signup: d.signup as Program['signup'],
  terms: d.terms.trim() === '' ? null : d.terms,
  website_url: d.website_url.trim() === '' ? null : d.website_url.trim(),
});

export const JOINING_FIELDS = ['signup', 'terms', 'website_url'];

/** The program's public join page, to share with prospective partners. */
export function joinUrl(organizationId: string, programId: string): string {
  return `${location.origin}/portal/${organizationId}/join/${programId}`;
}

export function JoiningFields({
  draft,
  set,
  error,
  program,
}: {
  draft: JoiningDraft;
  set: (k: keyof JoiningDraft) => (v: string) => void;
  error?: ApiError;
  program?: Program;
}) {
  const { session } = useSession();
  return (
    <>
      <Field
        label="Your website"
        name="website_url"
        type="url"
        value={draft.website_url}
        onChange={set('website_url')}
        error={error}
        hint="Referral links point here: https://…/?ref=<slug>"
      />
      <Field label="Partners join" name="signup" error={error}>
        {(attrs) => (
          <select {...attrs} value={draft.signup} onChange={(e) => set('signup')(e.target.value)}>
            <option value="approval">By application, approved by you</option>
            <option value="open">Freely: active at once</option>
            <option value="closed">Only by invitation</option>
          </select>
        )}
      </Field>
      <div className="span">
        <Field label="Program terms (partners accept them to join)" name="terms" error={error}>
          {(attrs) => (
            <textarea {...attrs} rows={4} value={draft.terms} onChange={(e) => set('terms')(e.target.value)} />
          )}
        </Field>
      </div>
      {program && draft.signup !== 'closed' && (
        <p className="span">
          Join page: <code className="break">{joinUrl(session.organization.id, program.id)}</code>{' '}
          <CopyButton text={joinUrl(session.organization.id, program.id)} label="Copy join link" />
        </p>
      )}
    </>
  );
}
