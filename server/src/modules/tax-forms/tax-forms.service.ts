import {
  TAX_FORM_MAX_BYTES,
  type PartnerTaxForm,
  type PayoutHoldReason,
  type TaxFormView,
} from '@affiliate-attribution/contract';
import { TooLargeError } from '../../domain-errors.js';
import { BadRequestError, ConflictError, NotFoundError, UnauthorizedError } from '../../http/errors.js';
import { taxFormPurpose, type SecretBox } from '../../security/secret-box.js';
import type { AffiliateRecord } from '../affiliates/affiliates.repository.js';
import { decodeBase64, documentTypeOf, type DocumentType } from './document-type.js';
import { partnerHoldMessage, payoutHoldOf, taxFormOf } from './tax-form-rules.js';
import type { TaxFormsRepository } from './tax-forms.repository.js';

export interface TaxFormUploadInput {
  kind: 'w9' | 'w8ben' | 'w8bene';
  file_name: string;
  content_base64: string;
}

/** What a partner is told when the service cannot store their form (no ENCRYPTION_KEY): what the merchant must do, and what they can do meanwhile. */
export const TAX_FORM_UPLOADS_OFF =
  'This merchant does not accept tax forms online yet: they must first set up encrypted storage for documents (ENCRYPTION_KEY on their affiliate service). Send them your form another way, or upload it here once they have.';

const view = (affiliate: AffiliateRecord, requireTaxForm: boolean, uploadsAccepted: boolean): TaxFormView => {
  const taxForm = taxFormOf(affiliate);
  return {
    affiliate_id: affiliate.id,
    tax_form: taxForm,
    payout_hold: payoutHoldOf(requireTaxForm, taxForm),
    uploads_accepted: uploadsAccepted,
  };
};

/**
 * Partners' tax forms (shared/spec/payout-rails.md): uploaded in the portal, sealed with
 * ENCRYPTION_KEY (AES-256-GCM, security/secret-box.ts) bound to the membership's row, decided on by
 * the merchant. A form is the partner's: it applies to every membership of their e-mail.
 */
export class TaxFormsService {
  constructor(
    private readonly forms: TaxFormsRepository,
    private readonly secrets: SecretBox,
  ) {}

  /** The partner's form and where it holds their payouts (GET /partner/api/tax-form). */
  async partnerView(organizationId: string, email: string): Promise<PartnerTaxForm> {
    const rows = await this.forms.partnerForms(organizationId, email);
    if (rows.length === 0) throw new UnauthorizedError('No partner with this e-mail any more');
    // Every membership holds the same submission; the latest one stands for the partner.
    const latest = rows
      .filter((r) => r.tax_form_submitted_at)
      .sort((a, b) => b.tax_form_submitted_at!.getTime() - a.tax_form_submitted_at!.getTime())[0];
    const holds = rows.flatMap((row) => {
      const hold = payoutHoldOf(row.require_tax_form, taxFormOf(row));
      return hold
        ? [
            {
              program_id: row.program_id,
              program_name: row.program_name,
              reason: hold.reason,
              message: partnerHoldMessage(
                hold.reason,
                row.program_name,
                row.tax_form_rejection_reason,
                this.secrets.encrypts,
              ),
            },
          ]
        : [];
    });
    return {
      tax_form: taxFormOf(latest ?? {}),
      required: rows.some((r) => r.require_tax_form),
      holds,
      uploads_accepted: this.secrets.encrypts,
    };
  }

  /** What holds the partner's payouts, per program of theirs (the portal's balances show it). */
  async holdsByProgram(
    organizationId: string,
    email: string,
  ): Promise<Map<string, { reason: PayoutHoldReason; message: string }>> {
    const view = await this.partnerView(organizationId, email);
    return new Map(view.holds.map((h) => [h.program_id, { reason: h.reason, message: h.message }]));
  }

  /**
   * A new form from the portal: base64 decoded strictly, at most TAX_FORM_MAX_BYTES (413), a PDF,
   * PNG or JPEG by its first bytes (400), sealed per membership. Without ENCRYPTION_KEY nothing is
   * stored: a tax document is never kept in clear (409, saying what the merchant must do; the
   * portal offers no upload then: `uploads_accepted`).
   */
  async submit(organizationId: string, email: string, input: TaxFormUploadInput): Promise<PartnerTaxForm> {
    if (!this.secrets.encrypts) throw new ConflictError(TAX_FORM_UPLOADS_OFF);
    const document = decodeBase64(input.content_base64);
    if (!document || document.length === 0) throw new BadRequestError('content_base64: not valid base64');
    if (document.length > TAX_FORM_MAX_BYTES)
      throw new TooLargeError(`content_base64: the document is larger than ${TAX_FORM_MAX_BYTES / 1024 / 1024} MiB`);
    const contentType: DocumentType | undefined = documentTypeOf(document);
    if (!contentType) throw new BadRequestError('content_base64: not a PDF, PNG or JPEG file');
    const ids = await this.forms.submit(
      organizationId,
      email,
      { kind: input.kind, contentType, fileName: input.file_name, sizeBytes: document.length },
      (affiliateId) => this.secrets.sealBytes(document, taxFormPurpose(organizationId, affiliateId)),
      new Date(),
    );
    if (ids.length === 0) throw new UnauthorizedError('No partner with this e-mail any more');
    return this.partnerView(organizationId, email);
  }

  /** GET /api/affiliates/{id}/tax-form (403/404 by the ownership rule). */
  async get(organizationId: string, id: string): Promise<TaxFormView> {
    const { affiliate, requireTaxForm } = await this.forms.owned(organizationId, id);
    return view(affiliate, requireTaxForm, this.secrets.encrypts);
  }

  async accept(organizationId: string, id: string): Promise<TaxFormView> {
    const { affiliate, requireTaxForm } = await this.forms.decide(
      organizationId,
      id,
      (current) => {
        if (!current.tax_form_status)
          throw new ConflictError('No tax form submitted: the partner uploads one in the portal');
        return current.tax_form_status === 'accepted' ? undefined : { status: 'accepted', reason: null };
      },
      new Date(),
    );
    return view(affiliate, requireTaxForm, this.secrets.encrypts);
  }

  async reject(organizationId: string, id: string, reason: string): Promise<TaxFormView> {
    const { affiliate, requireTaxForm } = await this.forms.decide(
      organizationId,
      id,
      (current) => {
        if (!current.tax_form_status)
          throw new ConflictError('No tax form submitted: the partner uploads one in the portal');
        return { status: 'rejected', reason: reason.trim() };
      },
      new Date(),
    );
    return view(affiliate, requireTaxForm, this.secrets.encrypts);
  }

  /** The document, decrypted, for the owner's download. */
  async document(
    organizationId: string,
    id: string,
  ): Promise<{ contentType: DocumentType; fileName: string; bytes: Buffer }> {
    const stored = await this.forms.document(organizationId, id);
    if (!stored) throw new NotFoundError('No tax form on file');
    const bytes = this.secrets.openBytes(stored.document, taxFormPurpose(organizationId, stored.affiliate_id));
    return { contentType: stored.content_type, fileName: stored.file_name, bytes };
  }
}
