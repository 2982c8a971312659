import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { twoMerchantsAndASecondProgram } from '../support/memberships.js';

/**
 * A conversion's references (its membership and its click) and a commission entry's (its
 * conversion, its membership) are foreign keys (the baseline migration), checked by PostgreSQL
 * itself on every row written. Checked here on PostgreSQL, below the service.
 */
describe('ledger references are foreign keys', () => {
  async function setup() {
    const fixture = await twoMerchantsAndASecondProgram();
    const { a } = fixture;
    return { ...fixture, clickId: await fixture.insertClick(a.id, a.affiliate.id, a.program.id) };
  }

  type Connection = Awaited<ReturnType<typeof setup>>['connection'];
  interface ConversionRow {
    organizationId: string;
    affiliateId: string;
    programId: string;
    clickId?: string | null;
  }
  /** Inserts the conversions in one statement; answers their ids. */
  async function insertConversions(connection: Connection, rows: ConversionRow[]): Promise<string[]> {
    const ids = rows.map(() => randomUUID());
    const values = rows.map(() => `(?, ?, ?, 10, 'USD', 'initial', 3, ?, ?, ?, now())`).join(', ');
    await connection.execute(
      `insert into conversions (id, organization_id, external_id, amount, currency, kind, commission_amount, affiliate_id, program_id, click_id, occurred_at) values ${values}`,
      rows.flatMap((row, i) => [
        ids[i],
        row.organizationId,
        `o_${randomUUID()}`,
        row.affiliateId,
        row.programId,
        row.clickId ?? null,
      ]),
    );
    return ids;
  }
  interface EntryRow {
    organizationId: string;
    affiliateId: string;
    programId: string;
    conversionId: string | null;
  }
  async function insertEntries(connection: Connection, rows: EntryRow[]): Promise<void> {
    const values = rows.map(() => `(?, ?, ?, 'pending', 3, 'USD', ?, ?, ?, ?)`).join(', ');
    await connection.execute(
      `insert into commissions (id, organization_id, type, status, amount, currency, affiliate_id, program_id, conversion_id, description) values ${values}`,
      rows.flatMap((row) => [
        randomUUID(),
        row.organizationId,
        row.conversionId ? 'sale' : 'adjustment',
        row.affiliateId,
        row.programId,
        row.conversionId,
        row.conversionId ? null : 'Bonus',
      ]),
    );
  }
  const missing = (constraint: string) => ({ code: '23503', constraint });

  it('refuse a conversion whose affiliate is not in its program or organization, or whose click does not exist', async () => {
    const { connection, a, b, secondProgramId, clickId } = await setup();
    const member = { organizationId: a.id, affiliateId: a.affiliate.id, programId: a.program.id };
    // Another program of the same organization: the affiliate is not a member of it.
    await expect(insertConversions(connection, [{ ...member, programId: secondProgramId }])).rejects.toMatchObject(
      missing('conversions_membership_fkey'),
    );
    // Another organization's affiliate and program, under this organization.
    await expect(
      insertConversions(connection, [{ ...member, affiliateId: b.affiliate.id, programId: b.program.id }]),
    ).rejects.toMatchObject(missing('conversions_membership_fkey'));
    // An affiliate that does not exist; a click that does not exist.
    await expect(insertConversions(connection, [{ ...member, affiliateId: randomUUID() }])).rejects.toMatchObject(
      missing('conversions_membership_fkey'),
    );
    await expect(insertConversions(connection, [{ ...member, clickId: randomUUID() }])).rejects.toMatchObject(
      missing('conversions_click_fkey'),
    );
    // One bad row among good ones fails the whole statement: nothing of it is stored.
    const before = await connection.execute<{ n: string }[]>(
      `select count(*) as n from conversions where organization_id = ?`,
      [a.id],
    );
    await expect(
      insertConversions(connection, [member, { ...member, clickId }, { ...member, clickId: randomUUID() }, member]),
    ).rejects.toMatchObject(missing('conversions_click_fkey'));
    expect(await connection.execute(`select count(*) as n from conversions where organization_id = ?`, [a.id])).toEqual(
      before,
    );
    // The right ones, with and without a click, in one statement.
    expect(await insertConversions(connection, [member, { ...member, clickId }])).toHaveLength(2);
  });

  it('refuse an entry whose conversion does not exist or is another affiliate’s, and an adjustment outside its membership', async () => {
    const { connection, a, b, secondProgramId } = await setup();
    const member = { organizationId: a.id, affiliateId: a.affiliate.id, programId: a.program.id };
    const [conversionId] = await insertConversions(connection, [member]);
    const [otherConversionId] = await insertConversions(connection, [
      { organizationId: b.id, affiliateId: b.affiliate.id, programId: b.program.id },
    ]);

    await expect(insertEntries(connection, [{ ...member, conversionId: randomUUID() }])).rejects.toMatchObject(
      missing('commissions_conversion_fkey'),
    );
    // Another organization's conversion, under this organization.
    await expect(insertEntries(connection, [{ ...member, conversionId: otherConversionId }])).rejects.toMatchObject(
      missing('commissions_conversion_fkey'),
    );
    // The conversion exists, but the entry names another membership than the conversion's.
    await expect(
      insertEntries(connection, [{ ...member, programId: secondProgramId, conversionId: conversionId }]),
    ).rejects.toMatchObject(missing('commissions_membership_fkey'));
    // An adjustment (no conversion) outside any membership of this organization.
    await expect(
      insertEntries(connection, [{ ...member, programId: secondProgramId, conversionId: null }]),
    ).rejects.toMatchObject(missing('commissions_membership_fkey'));
    await expect(
      insertEntries(connection, [{ ...member, affiliateId: b.affiliate.id, conversionId: null }]),
    ).rejects.toMatchObject(missing('commissions_membership_fkey'));
    // A good entry beside a bad one: neither is stored.
    await expect(
      insertEntries(connection, [
        { ...member, conversionId: conversionId },
        { ...member, conversionId: randomUUID() },
      ]),
    ).rejects.toMatchObject(missing('commissions_conversion_fkey'));
    expect(
      await connection.execute(`select count(*)::int as n from commissions where conversion_id = ?`, [conversionId]),
    ).toEqual([{ n: 0 }]);

    await insertEntries(connection, [
      { ...member, conversionId: conversionId },
      { ...member, conversionId: null },
    ]);
    expect(
      await connection.execute(`select type from commissions where organization_id = ? order by type`, [a.id]),
    ).toEqual([{ type: 'adjustment' }, { type: 'sale' }]);
    // An entry's references never change once written.
    await expect(
      connection.execute(`update commissions set conversion_id = ? where conversion_id = ?`, [
        otherConversionId,
        conversionId,
      ]),
    ).rejects.toMatchObject({
      code: '23503',
    });
    await expect(
      connection.execute(`update commissions set program_id = ? where organization_id = ? and type = 'adjustment'`, [
        secondProgramId,
        a.id,
      ]),
    ).rejects.toMatchObject({
      code: '23503',
    });
    // What the ledger itself changes on an entry is free.
    await connection.execute(
      `update commissions set status = 'approved', approved_at = now() where organization_id = ?`,
      [a.id],
    );
  });

  it('keep what is referred to, and let go of what nothing refers to: a referenced row is not deleted, an unreferenced one is', async () => {
    const { connection, a, b, clickId, insertClick } = await setup();
    const member = { organizationId: a.id, affiliateId: a.affiliate.id, programId: a.program.id };
    const [conversionId] = await insertConversions(connection, [{ ...member, clickId }]);
    await insertEntries(connection, [{ ...member, conversionId: conversionId }]);
    await expect(connection.execute(`delete from clicks where id = ?`, [clickId])).rejects.toMatchObject(
      missing('conversions_click_fkey'),
    );
    await expect(connection.execute(`delete from conversions where id = ?`, [conversionId])).rejects.toMatchObject(
      missing('commissions_conversion_fkey'),
    );
    await expect(connection.execute(`delete from affiliates where id = ?`, [a.affiliate.id])).rejects.toMatchObject({
      code: '23503',
    });
    // Re-keying a referenced row is refused the same way.
    await expect(
      connection.execute(`update clicks set id = ? where id = ?`, [randomUUID(), clickId]),
    ).rejects.toMatchObject(missing('conversions_click_fkey'));
    // A click nothing refers to is deleted.
    const loose = await insertClick(b.id, b.affiliate.id, b.program.id);
    expect(await connection.execute(`delete from clicks where id = ? returning id`, [loose])).toEqual([{ id: loose }]);
    // What the ledger itself changes on its rows is free.
    await connection.execute(`update affiliates set name = 'Renamed' where id = ?`, [a.affiliate.id]);
    await connection.execute(`update conversions set status = 'reversed', reversed_at = now() where id = ?`, [
      conversionId,
    ]);
    expect(await connection.execute(`select count(*)::int as n from conversions where id = ?`, [conversionId])).toEqual(
      [{ n: 1 }],
    );
  });
});
