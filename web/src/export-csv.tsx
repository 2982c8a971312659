import { useState } from 'react';
import type { ExportKind } from '@affiliate-attribution/contract';
import { modeHeaders, useMode } from './mode';

const NAMES: Record<ExportKind, string> = {
  affiliates: 'affiliates',
  commissions: 'commissions',
  conversions: 'conversions',
};

/**
 * "Export CSV": GET /api/exports/{kind}, which the service streams. In live mode a plain download
 * link (the browser writes the file as it arrives); in test mode the request must carry X-Mode,
 * which a link cannot, so the file is fetched with it and saved from memory.
 */
export function ExportCsv({ kind }: { kind: ExportKind }) {
  const mode = useMode();
  const [error, setError] = useState<string>();
  const href = `/api/exports/${kind}`;
  const fileName = `${kind}-${new Date().toISOString().slice(0, 10)}.csv`;
  return (
    <>
      <a
        className="button secondary small"
        href={href}
        download={fileName}
        aria-label={`Export CSV of ${NAMES[kind]}`}
        onClick={async (e) => {
          if (mode !== 'test') return;
          e.preventDefault();
          setError(undefined);
          const res = await fetch(href, { credentials: 'same-origin', headers: modeHeaders() });
          if (!res.ok) return setError(`The export failed (${res.status})`);
          const url = URL.createObjectURL(await res.blob());
          const link = Object.assign(document.createElement('a'), { href: url, download: fileName });
          link.click();
          URL.revokeObjectURL(url);
        }}
      >
        Export CSV
      </a>
      {error && (
        <span className="error" role="alert">
          {error}
        </span>
      )}
    </>
  );
}
