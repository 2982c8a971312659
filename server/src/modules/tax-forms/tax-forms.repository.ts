import type { MikroORM } from '@mikro-orm/postgresql';
import { kyselyOf } from '../../db/database.js';
import { findOwnedRow, type OwnedTable } from '../../db/owned-row.js';
import { Db } from '../../db/sql.js';
import { eventsOf } from '../events/outbox.js';
import { payoutRunLock } from '../payouts/payouts.repository.js';
import type { AffiliateRecord } from '../affiliates/affiliates.repository.js';
import type { DocumentType } from './document-type.js';
import { lockPartnerForm } from './partner-form.js';
import { sql } from 'kysely';

const AFFILIATES_BY_ID: OwnedTable = { table: 'affiliates', notFound: 'Affiliate not found' };

/** One of a partner's memberships as the portal's tax form page reads it. */
export interface PartnerTaxFormRow {
  affiliate_id: string;
  status: 'active' | 'pending' | 'disabled';
  program_id: string;
  program_name: string;
  require_tax_form: boolean;
  tax_form_status: 'submitted' | 'accepted' | 'rejected' | null;
  tax_form_kind: 'w9' | 'w8ben' | 'w8bene' | null;
  tax_form_submitted_at: Date | null;
  tax_form_decided_at: Date | null;
  tax_form_rejection_reason: string | null;
}

export interface StoredDocument {
  content_type: DocumentType;
  file_name: string;
  document: Buffer;
}

export interface NewTaxForm {
  kind: 'w9' | 'w8ben' | 'w8bene';
  contentType: DocumentType;
  fileName: string;
  sizeBytes: number;
}

/** The tax forms module's only way to the database (the affiliates' tax_form_* columns and tax_forms). */
export class TaxFormsRepository {
  constructor(private readonly orm: MikroORM) {}

  private get db(): Db {
    return Db.of(this.orm);
  }

  /** The partner's memberships (one e-mail in one organization) with their programs' rule, oldest first. */
  partnerForms(organizationId: string, email: string): Promise<PartnerTaxFormRow[]> {
    return this.db
      .rows(sql<PartnerTaxFormRow>`select a.id as affiliate_id, a.status, p.id as program_id, p.name as program_name, p.require_tax_form,
              a.tax_form_status, a.tax_form_kind, a.tax_form_submitted_at, a.tax_form_decided_at, a.tax_form_rejection_reason
         from affiliates a join programs p on p.organization_id = a.organization_id and p.id = a.program_id
        where a.organization_id = ${organizationId} and a.email = ${email} order by a.created_at, a.id`);
  }

  /**
   * The partner's form, for every membership of theirs, in one transaction: each membership's row of
   * tax_forms replaced by the new document (sealed for that row by `seal`), and its tax_form_*
   * columns back to `submitted` (affiliate.updated per membership). Answers the memberships' ids.
   */
  submit(
    organizationId: string,
    email: string,
    form: NewTaxForm,
    seal: (affiliateId: string) => Buffer,
    at: Date,
  ): Promise<string[]> {
    return this.db.transaction(async (db) => {
      await lockPartnerForm(db, organizationId, email);
      const changed = await db.rows(sql<{ id: string }>`with changed as (
           update affiliates set tax_form_status = 'submitted', tax_form_kind = ${form.kind}, tax_form_submitted_at = ${at}, tax_form_decided_at = null, tax_form_rejection_reason = null
            where organization_id = ${organizationId} and email = ${email} returning *),
         ev as (${sql.raw(eventsOf('affiliate.updated', 'changed', organizationId))})
         select id from changed order by id`);
      for (const { id } of changed) {
        await db.rows(sql`insert into tax_forms (organization_id, affiliate_id, kind, content_type, file_name, size_bytes, document, submitted_at) values (${organizationId}, ${id}, ${form.kind}, ${form.contentType}, ${form.fileName}, ${form.sizeBytes}, ${seal(id)}, ${at})
           on conflict (organization_id, affiliate_id) do update set kind = excluded.kind, content_type = excluded.content_type, file_name = excluded.file_name,
             size_bytes = excluded.size_bytes, document = excluded.document, submitted_at = excluded.submitted_at`);
      }
      return changed.map((row) => row.id);
    });
  }

  /** An owned affiliate (403/404 by the ownership rule) and its program's require_tax_form. */
  async owned(organizationId: string, id: string): Promise<{ affiliate: AffiliateRecord; requireTaxForm: boolean }> {
    const affiliate = await findOwnedRow<AffiliateRecord>(this.db, AFFILIATES_BY_ID, organizationId, id);
    return { affiliate, requireTaxForm: await this.requireTaxForm(this.db, affiliate) };
  }

  private async requireTaxForm(db: Db, affiliate: AffiliateRecord): Promise<boolean> {
    const program = await db.one(
      sql<{
        require_tax_form: boolean;
      }>`select require_tax_form from programs where organization_id = ${affiliate.organization_id} and id = ${affiliate.program_id}`,
    );
    return program?.require_tax_form ?? false;
  }

  /**
   * The merchant's decision on the form of an owned affiliate, for every membership of the same
   * partner that has one, in one transaction. It holds the payout run's lock shared
   * (payouts.repository.ts), so that a run sees the form either before or after the decision,
   * never between its statements. `decide` sees the stored row: undefined leaves it unchanged.
   */
  decide(
    organizationId: string,
    id: string,
    decide: (current: AffiliateRecord) => { status: 'accepted' | 'rejected'; reason: string | null } | undefined,
    at: Date,
  ): Promise<{ affiliate: AffiliateRecord; requireTaxForm: boolean }> {
    return this.db.transaction(async (db) => {
      await db.rows({ compile: () => payoutRunLock('shared', organizationId).compile(kyselyOf(this.orm)) });
      const current = await findOwnedRow<AffiliateRecord>(db, AFFILIATES_BY_ID, organizationId, id);
      await lockPartnerForm(db, organizationId, current.email);
      const decision = decide(current);
      let affiliate = current;
      if (decision) {
        const changed = await db.rows(sql<AffiliateRecord>`with changed as (
             update affiliates set tax_form_status = ${decision.status}, tax_form_decided_at = ${at}, tax_form_rejection_reason = ${decision.reason}
              where organization_id = ${organizationId} and email = ${current.email} and tax_form_status is not null returning *),
           ev as (${sql.raw(eventsOf('affiliate.updated', 'changed', organizationId))})
           select * from changed`);
        affiliate = changed.find((row) => row.id === current.id) ?? current;
      }
      return { affiliate, requireTaxForm: await this.requireTaxForm(db, affiliate) };
    });
  }

  /**
   * The sealed document of an owned affiliate (403/404 by the ownership rule), and the membership
   * it is sealed for; undefined when none is on file. The form is the partner's: a membership
   * created after the upload has no row of its own until the next upload, and reads the
   * partner's latest one (any membership of the e-mail), as it took the form's state
   * (partner-form.ts). A membership without a form (`missing`) has no document.
   */
  async document(organizationId: string, id: string): Promise<(StoredDocument & { affiliate_id: string }) | undefined> {
    const affiliate = await findOwnedRow<AffiliateRecord>(this.db, AFFILIATES_BY_ID, organizationId, id);
    if (!affiliate.tax_form_status) return undefined;
    return this.db.one(sql<
      StoredDocument & { affiliate_id: string }
    >`select t.affiliate_id, t.content_type, t.file_name, t.document
         from tax_forms t join affiliates a on a.organization_id = t.organization_id and a.id = t.affiliate_id
        where t.organization_id = ${organizationId} and a.email = ${affiliate.email}
        order by t.submitted_at desc, (t.affiliate_id = ${affiliate.id}) desc limit 1`);
  }
}
