import { describe, expect, it, vi } from 'vitest';
import { Db } from '../../server/src/db/sql.js';
import { ImportWriter } from '../../server/src/modules/imports/import-writer.js';
import { finished } from '../imports/import-helpers.js';
import { createOrganization, expectError, request, type Api } from '../support/api.js';
import { testServer } from '../support/server.js';
import { sql } from 'kysely';

/**
 * Issue 47, item 1: a partner's slug and every alias are one namespace per organization (per mode:
 * the test twin is an organization of its own). A token in use is refused ("already taken") by
 * every path that creates one, and the database decides between concurrent requests.
 */

const unique = (prefix: string) => `${prefix}-${Math.random().toString(36).slice(2, 8)}`;

/** An organization with an open program, into which a CSV import brought Ada: her slug, and an alias. */
async function adaImported() {
  const org = await createOrganization();
  const program = (await org.api.post('/api/programs', { name: 'Main', commission_value: 20, signup: 'open' })).body
    .data.program;
  const slug = unique('ada');
  const alias = `${slug}-blog`;
  const done = await csvImport(org.api, program.id, [['a-1', 'ada@example.com', `${slug} ${alias}`]]);
  expect(done.status, done.error).toBe('succeeded');
  const ada = (await org.api.get('/api/affiliates')).body.data.affiliates[0];
  expect(ada.slug).toBe(slug);
  return { ...org, program, ada, slug, alias };
}

async function csvImport(api: Api, programId: string, rows: [string, string, string][]) {
  const csv = ['id,email,first_name,last_name,status,payout_email,tokens']
    .concat(rows.map(([id, email, tokens]) => `${id},${email},Imp,Orted,active,,${tokens}`))
    .join('\n');
  const res = await api.post('/api/imports', {
    source: 'csv',
    credentials: { affiliates_csv: `${csv}\n` },
    program_id: programId,
    dry_run: false,
  });
  expect(res.status, JSON.stringify(res.body)).toBe(202);
  return finished(api, res.body.data.import.id);
}

async function clickCredits(api: Api, ref: string): Promise<string> {
  const click = await api.post('/api/clicks', { ref });
  expect(click.status, JSON.stringify(click.body)).toBe(201);
  return click.body.data.click.affiliate_id;
}

describe('link tokens: slugs and aliases are one namespace', () => {
  it("refuses another partner's alias as a slug on POST /api/affiliates (409, nothing created); clicks keep crediting its owner", async () => {
    const m = await adaImported();
    expectError(
      await m.api.post('/api/affiliates', { email: 'new@example.com', program_id: m.program.id, slug: m.alias }),
      409,
      `slug: "${m.alias}" is already taken`,
    );
    expect((await m.api.get('/api/affiliates')).body.data.affiliates).toHaveLength(1);
    expect(await clickCredits(m.api, m.alias)).toBe(m.ada.id);
    expect(await clickCredits(m.api, m.slug)).toBe(m.ada.id);
    // The test twin is a namespace of its own, as its slugs always were.
    const testProgram = (await m.testApi.post('/api/programs', { name: 'T', commission_value: 5 })).body.data.program;
    expect(
      (await m.testApi.post('/api/affiliates', { email: 'new@example.com', program_id: testProgram.id, slug: m.alias }))
        .status,
    ).toBe(201);
  });

  it("refuses another partner's alias to an applicant in the portal, and says it is not available", async () => {
    const m = await adaImported();
    const { baseUrl } = await testServer();
    const available = await request('GET', `/partner/api/organizations/${m.id}/slugs/${m.alias}`);
    expect(available.status).toBe(200);
    expect(available.body.data.available).toBe(false);
    expectError(
      await request('POST', `/partner/api/organizations/${m.id}/programs/${m.program.id}/applications`, {
        body: { name: 'Newcomer', email: 'newcomer@example.com', slug: m.alias, accept_terms: true },
        headers: { origin: baseUrl },
      }),
      409,
      `slug: "${m.alias}" is already taken`,
    );
    expect(await clickCredits(m.api, m.alias)).toBe(m.ada.id);
  });

  it('an import reports a token another partner holds (slug or alias) and never takes it over', async () => {
    const m = await adaImported();
    const posted = await m.api.post('/api/affiliates', {
      email: 'dan@example.com',
      program_id: m.program.id,
      slug: unique('dan'),
    });
    expect(posted.status).toBe(201);
    const dan = posted.body.data.affiliate;
    const cy = unique('cy');
    const done = await csvImport(m.api, m.program.id, [['c-1', 'cy@example.com', `${m.alias} ${dan.slug} ${cy}`]]);
    expect(done.status, done.error).toBe('succeeded');
    expect(done.skipped).toEqual(
      expect.arrayContaining([
        {
          kind: 'affiliates',
          source_id: 'c-1',
          reason: expect.stringContaining(`"${m.alias}" is already another partner's link`),
        },
        {
          kind: 'affiliates',
          source_id: 'c-1',
          reason: expect.stringContaining(`"${dan.slug}" is already another partner's link`),
        },
      ]),
    );
    const cyRow = (await m.api.get('/api/affiliates?email=cy@example.com')).body.data.affiliates[0];
    expect(cyRow.slug).toBe(cy);
    expect(await clickCredits(m.api, m.alias)).toBe(m.ada.id);
    expect(await clickCredits(m.api, dan.slug)).toBe(dan.id);
    expect(await clickCredits(m.api, cy)).toBe(cyRow.id);
  });

  it('an import passes over a token taken between its check and its write (a concurrent request), and reports it', async () => {
    const m = await adaImported();
    // The import's check answers "free", as it would have just before a concurrent request took the token.
    const checked = vi.spyOn(ImportWriter.prototype as unknown as { tokenFree: () => Promise<boolean> }, 'tokenFree');
    checked.mockResolvedValue(true);
    const cy = unique('cy');
    try {
      const done = await csvImport(m.api, m.program.id, [['c-2', 'cy2@example.com', `${m.alias} ${cy}`]]);
      expect(done.status, done.error).toBe('succeeded');
      expect(done.skipped).toEqual([
        {
          kind: 'affiliates',
          source_id: 'c-2',
          reason: expect.stringContaining(`"${m.alias}" is already another partner's link`),
        },
      ]);
    } finally {
      checked.mockRestore();
    }
    const cyRow = (await m.api.get('/api/affiliates?email=cy2@example.com')).body.data.affiliates[0];
    expect(cyRow.slug).toBe(cy);
    expect(await clickCredits(m.api, m.alias)).toBe(m.ada.id);
  });

  it('the database holds each token once: concurrent creates with one slug make one partner, and a second holder is refused by the key', async () => {
    const m = await adaImported();
    const slug = unique('race');
    const answers = await Promise.all(
      Array.from({ length: 8 }, (_, i) =>
        m.api.post('/api/affiliates', { email: `racer${i}@example.com`, program_id: m.program.id, slug }),
      ),
    );
    expect(answers.map((a) => a.status).sort()).toEqual([201, 409, 409, 409, 409, 409, 409, 409]);
    const db = Db.of((await testServer()).db.orm);
    // Every slug and alias of the organization is held, by its own partner, in one table keyed by the token.
    const held = await db.rows(
      sql<{
        token: string;
        affiliate_id: string;
      }>`select token, affiliate_id from affiliate_link_tokens where organization_id = ${m.id} order by token`,
    );
    const expected = await db.rows(sql<{
      token: string;
      affiliate_id: string;
    }>`select slug as token, id as affiliate_id from affiliates where organization_id = ${m.id}
       union all select token, affiliate_id from affiliate_link_aliases where organization_id = ${m.id} order by token`);
    expect(held).toEqual(expected);
    const winner = answers.find((a) => a.status === 201)!.body.data.affiliate;
    // Not only the code: an alias for Ada with the winner's slug is refused by the database itself.
    await expect(
      db.rows(
        sql`insert into affiliate_link_tokens (organization_id, token, affiliate_id, program_id) values (${m.id}, ${winner.slug}, ${m.ada.id}, ${m.program.id})`,
      ),
    ).rejects.toMatchObject({ code: '23505' });
    await expect(
      db.rows(
        sql`insert into affiliate_link_aliases (organization_id, token, affiliate_id, program_id) values (${m.id}, ${winner.slug}, ${m.ada.id}, ${m.program.id})`,
      ),
    ).rejects.toMatchObject({ code: '23503' });
  });
});
