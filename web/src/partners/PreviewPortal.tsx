import { useState } from 'react';
import type { Affiliate } from '@affiliate-attribution/contract';
import { api, data } from '../api';
import { FormError, useSubmit } from '../ui';

/**
 * Test mode: opens the partner portal as this test affiliate, in a new tab, signed in by a link
 * that works once for 5 minutes (POST /api/affiliates/{id}/portal-preview). The tab is opened at
 * the click, before the link is asked for (a tab opened after an await may be blocked as a pop-up),
 * and cut from this page (no `opener`). When the browser blocks it anyway, the link is shown.
 */
export function PreviewPortal({ affiliate }: { affiliate: Affiliate }) {
  const [blocked, setBlocked] = useState<string>();
  const preview = useSubmit(async (tab?: Window | null) => {
    try {
      const { url } = data(await api.portalPreview.create({ params: { id: affiliate.id }, body: {} }));
      if (tab && !tab.closed) tab.location.href = url;
      else setBlocked(url);
    } catch (err) {
      tab?.close();
      throw err;
    }
  });
  function open() {
    setBlocked(undefined);
    const tab = window.open('', '_blank');
    if (tab) tab.opener = null;
    void preview.submit(tab);
  }
  return (
    <span>
      <button type="button" className="secondary small" onClick={open} disabled={preview.busy}>
        Preview portal
      </button>{' '}
      <small className="muted">as this test partner sees it</small>
      {blocked && (
        <span role="status">
          {' '}
          <a href={blocked} target="_blank" rel="noopener noreferrer">
            Open the preview
          </a>{' '}
          (works once, for 5 minutes)
        </span>
      )}
      <FormError error={preview.error} />
    </span>
  );
}
