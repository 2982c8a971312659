import { randomUUID } from 'node:crypto';
import { expect } from 'vitest';
import { createMerchant } from './api.js';
import { testServer } from './server.js';

/**
 * For the checks of membership references on PostgreSQL itself, below the service: two merchants
 * (`a`, `b`, each with a program and an affiliate), a second program of `a` that `a`'s affiliate
 * is no member of, the worker's database connection, and a raw click insert.
 */
export async function twoMerchantsAndASecondProgram() {
  const { db } = await testServer();
  const a = await createMerchant();
  const b = await createMerchant();
  const second = await a.api.post('/api/programs', { name: 'Second', commission_value: 10 });
  expect(second.status).toBe(201);
  const connection = db.orm.em.getConnection();
  /** Inserts a click of this membership; answers its id. */
  const insertClick = async (organizationId: string, affiliateId: string, programId: string): Promise<string> => {
    const id = randomUUID();
    await connection.execute(
      `insert into clicks (id, organization_id, affiliate_id, program_id, cookie_id, occurred_at) values (?, ?, ?, ?, ?, now())`,
      [id, organizationId, affiliateId, programId, `svc_${randomUUID()}`],
    );
    return id;
  };
  return { db, connection, a, b, secondProgramId: second.body.data.program.id as string, insertClick };
}
