import { expect } from 'vitest';
import { createOrganization, type Api } from '../support/api.js';

/** A merchant with one program to import into. */
export async function merchant() {
  const org = await createOrganization();
  const p = await org.api.post('/api/programs', { name: 'Main', commission_value: 30 });
  expect(p.status).toBe(201);
  return { ...org, programId: p.body.data.program.id as string };
}

export async function finished(api: Api, id: string) {
  for (let i = 0; i < 300; i++) {
    const res = await api.get(`/api/imports/${id}`);
    expect(res.status).toBe(200);
    if (res.body.data.import.status !== 'running') return res.body.data.import;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(
    `import still running after 30 s: ${JSON.stringify((await api.get(`/api/imports/${id}`)).body.data.import)}`,
  );
}

/** Starts an import of `source` and waits for its end. */
export async function runImport(
  api: Api,
  programId: string,
  source: string,
  credentials: Record<string, string>,
  dryRun = false,
) {
  const res = await api.post('/api/imports', { source, credentials, program_id: programId, dry_run: dryRun });
  expect(res.status, JSON.stringify(res.body)).toBe(202);
  expect(res.body.data.import.status).toBe('running');
  return finished(api, res.body.data.import.id);
}
