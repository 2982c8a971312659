import type { MikroORM } from '@mikro-orm/postgresql';
import { contract } from '@affiliate-attribution/contract';
import { s } from '../../http/router-types.js';
import { requireOrganization } from '../../http/request-context.js';
import { csvExport } from './csv-exports.js';

export const exportsRouter = (orm: MikroORM) =>
  s.router(contract.exports, {
    csv: async ({ req, params, res }) => {
      const organization = requireOrganization(req);
      const day = new Date().toISOString().slice(0, 10);
      res.setHeader('Content-Type', 'text/csv; charset=utf-8');
      res.setHeader('Content-Disposition', `attachment; filename="${params.kind}-${day}.csv"`);
      res.setHeader('Cache-Control', 'no-store');
      // ts-rest pipes a stream as it is: the body type of the contract (a string) is what arrives.
      return { status: 200, body: csvExport(orm, organization.id, params.kind) as unknown as string };
    },
  });
