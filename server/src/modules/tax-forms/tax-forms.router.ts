import { Readable } from 'node:stream';
import { contract } from '@affiliate-attribution/contract';
import { s } from '../../http/router-types.js';
import { requireOrganization } from '../../http/request-context.js';
import { contentDisposition } from './document-type.js';
import type { TaxFormsService } from './tax-forms.service.js';

export const taxFormsRouter = (forms: TaxFormsService) =>
  s.router(contract.taxForms, {
    get: async ({ req, params }) => ({
      status: 200,
      body: { success: true, data: await forms.get(requireOrganization(req).id, params.id) },
    }),
  });

export const taxFormReviewRouter = (forms: TaxFormsService) =>
  s.router(contract.taxFormReview, {
    document: async ({ req, res, params }) => {
      const { contentType, fileName, bytes } = await forms.document(requireOrganization(req).id, params.id);
      // Its own type (ts-rest would write the contract's one), never sniffed or cached by the browser.
      res.setHeader('Content-Type', contentType);
      res.setHeader('Content-Disposition', contentDisposition(fileName));
      res.setHeader('Content-Length', String(bytes.length));
      res.setHeader('Cache-Control', 'no-store');
      return { status: 200, body: Readable.from([bytes]) };
    },
    accept: async ({ req, params }) => ({
      status: 200,
      body: { success: true, data: await forms.accept(requireOrganization(req).id, params.id) },
    }),
    reject: async ({ req, params, body }) => ({
      status: 200,
      body: { success: true, data: await forms.reject(requireOrganization(req).id, params.id, body.reason) },
    }),
  });
