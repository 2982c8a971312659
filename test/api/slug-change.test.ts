import { describe, expect, it } from 'vitest';
import { createMerchant, expectError } from '../support/api.js';

/**
 * Issue 47, item 7: PATCH /api/affiliates/{id} changes the slug, keeping the old one as an alias
 * so that the links the partner published keep paying. One namespace (link-tokens.ts): a slug
 * another affiliate holds is 409; one of the affiliate's own aliases swaps with the slug.
 */
const credited = async (m: Awaited<ReturnType<typeof createMerchant>>, ref: string) => {
  const click = await m.api.post('/api/clicks', { ref });
  expect(click.status, JSON.stringify(click.body)).toBe(201);
  return click.body.data.click.affiliate_id as string;
};

describe('changing an affiliate slug', () => {
  it('changes it, keeps the old slug as an alias that still credits the partner, and shows the aliases', async () => {
    const m = await createMerchant();
    const renamed = `${m.slug}-new`;
    const res = await m.api.patch(`/api/affiliates/${m.affiliate.id}`, { slug: renamed });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.data).toEqual({ affiliate: { ...m.affiliate, slug: renamed }, aliases: [m.slug] });
    expect((await m.api.get(`/api/affiliates/${m.affiliate.id}`)).body.data).toEqual(res.body.data);
    expect((await m.api.get('/api/affiliates')).body.data.affiliates[0].slug).toBe(renamed);
    expect(await credited(m, renamed)).toBe(m.affiliate.id);
    expect(await credited(m, m.slug)).toBe(m.affiliate.id);

    // A third slug: both earlier ones stay aliases.
    const third = `${m.slug}-3rd`;
    const again = await m.api.patch(`/api/affiliates/${m.affiliate.id}`, { slug: third });
    expect(again.body.data.aliases).toEqual([m.slug, renamed].sort());
    for (const ref of [m.slug, renamed, third]) expect(await credited(m, ref)).toBe(m.affiliate.id);
  });

  it('a slug equal to one of its own aliases swaps the two; the same slug changes nothing', async () => {
    const m = await createMerchant();
    const renamed = `${m.slug}-new`;
    expect((await m.api.patch(`/api/affiliates/${m.affiliate.id}`, { slug: renamed })).status).toBe(200);
    const back = await m.api.patch(`/api/affiliates/${m.affiliate.id}`, { slug: m.slug });
    expect(back.status, JSON.stringify(back.body)).toBe(200);
    expect(back.body.data).toMatchObject({ affiliate: { slug: m.slug }, aliases: [renamed] });
    const same = await m.api.patch(`/api/affiliates/${m.affiliate.id}`, { slug: m.slug });
    expect(same.body.data).toMatchObject({ affiliate: { slug: m.slug }, aliases: [renamed] });
    for (const ref of [m.slug, renamed]) expect(await credited(m, ref)).toBe(m.affiliate.id);
  });

  it('refuses a slug or alias another affiliate holds (409, nothing changed), and a malformed slug (400)', async () => {
    const m = await createMerchant();
    const other = await m.api.post('/api/affiliates', {
      email: 'other@example.com',
      program_id: m.program.id,
      slug: `${m.slug}-other`,
    });
    expect(other.status).toBe(201);
    const otherId = other.body.data.affiliate.id;
    // The other's old slug becomes its alias.
    expect((await m.api.patch(`/api/affiliates/${otherId}`, { slug: `${m.slug}-other2` })).status).toBe(200);
    for (const taken of [`${m.slug}-other`, `${m.slug}-other2`])
      expectError(
        await m.api.patch(`/api/affiliates/${m.affiliate.id}`, { slug: taken, name: 'Not saved' }),
        409,
        `slug: "${taken}" is already taken`,
      );
    expectError(await m.api.patch(`/api/affiliates/${m.affiliate.id}`, { slug: 'Bad Slug' }), 400, /^slug: /);
    const unchanged = await m.api.get(`/api/affiliates/${m.affiliate.id}`);
    expect(unchanged.body.data).toEqual({ affiliate: m.affiliate, aliases: [] });
    expect(await credited(m, `${m.slug}-other`)).toBe(otherId);
    expect(await credited(m, m.slug)).toBe(m.affiliate.id);
  });

  it('two affiliates asking for one slug at once: one gets it', async () => {
    const m = await createMerchant();
    const second = await m.api.post('/api/affiliates', { email: 'second@example.com', program_id: m.program.id });
    const wanted = `${m.slug}-wanted`;
    const answers = await Promise.all(
      [m.affiliate.id, second.body.data.affiliate.id].map((id) =>
        m.api.patch(`/api/affiliates/${id}`, { slug: wanted }),
      ),
    );
    expect(answers.map((a) => a.status).sort()).toEqual([200, 409]);
    const winner = answers.find((a) => a.status === 200)!.body.data.affiliate.id;
    expect(await credited(m, wanted)).toBe(winner);
  });
});
