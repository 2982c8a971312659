import { randomUUID } from 'node:crypto';
import type { ImportKind } from '@affiliate-attribution/contract';
import type { Db } from '../../db/sql.js';
import { compiled, countRows } from '../reports/report-contributions.js';
import { lockPartnerForm, partnerFormOf } from '../tax-forms/partner-form.js';
import { SLUG_PATTERN } from '@affiliate-attribution/contract';
import { generateSlug } from '../affiliates/affiliates.service.js';
import { holdToken, isTokenTaken, tokenHolder, TokenTakenError } from '../affiliates/link-tokens.js';
import { writeConversion } from './import-conversion.js';
import { writeRefund } from './import-refunds.js';
import { printable, unstorableText } from './storable-text.js';
import type {
  Counts,
  Skip,
  SourceAffiliate,
  SourceBatch,
  SourceCommission,
  SourceCustomer,
  SourcePayout,
} from './import-model.js';
import { sql } from 'kysely';

export interface ImportTarget {
  organizationId: string;
  programId: string;
  source: string;
  importId: string;
}

/** Generated slugs tried for a partner none of whose tokens is free (their random suffix makes a collision rare). */
const SLUG_ATTEMPTS = 5;

/** The skipped rows an import keeps to show (its counts count every one). */
export const SKIPPED_KEPT = 1000;

/**
 * Writes one batch of source rows, inside the caller's transaction (import-runner.ts: one per page,
 * or one rolled back for a dry run). Each row is written together with its key in import_rows
 * (source, kind, source id), so a key found means the row is already here: a rerun, or a resumed
 * job going over its last page again, changes nothing.
 *
 * Rows are written here rather than through the affiliates, conversions and commissions services:
 * those announce every write as an outbound event (modules/events/outbox.ts) and apply the current
 * program rules (attribution, rates, fraud holds, e-mails), where an import records history as the
 * source knew it: its amounts, statuses and dates, no webhooks and no e-mails.
 */
export class ImportWriter {
  constructor(
    readonly db: Db,
    readonly target: ImportTarget,
    readonly counts: Counts,
    private readonly skipped: Skip[],
  ) {}

  async write(batch: SourceBatch): Promise<void> {
    for (const skip of batch.skipped ?? []) this.skip(skip.kind, skip.source_id, skip.reason);
    for (const a of this.storable('affiliates', batch.affiliates)) await this.affiliate(a);
    for (const c of this.storable('customers', batch.customers)) await this.customer(c);
    for (const p of this.storable('payouts', batch.payouts)) await this.payout(p);
    for (const c of this.storable('commissions', batch.commissions)) await this.commission(c);
    await this.addToReports();
    for (const r of this.storable('commissions', batch.refunds)) await writeRefund(this, r);
    await this.addToReports();
  }

  /** The rows this writer inserted, for the report read model (addToReports). */
  readonly fresh = { customers: [] as string[], conversions: [] as string[], commissions: [] as string[] };

  /**
   * What the rows inserted since the last call count in the reports, added in the page's
   * transaction (modules/reports/report-contributions.ts), after the inserts and before any update
   * of them (a refund's): rows keep their source's dates, and count on those days.
   */
  private async addToReports(): Promise<void> {
    const { customers, conversions, commissions } = this.fresh;
    const add = countRows(this.target.organizationId, { customers, conversions, commissions }, 1);
    if (!add) return;
    await this.db.rows(compiled(add));
    this.fresh.customers = [];
    this.fresh.conversions = [];
    this.fresh.commissions = [];
  }

  /** The rows PostgreSQL can store as they are; each other one skipped, naming its field (storable-text.ts). */
  private storable<T extends { source_id: string }>(kind: ImportKind, rows: T[] | undefined): T[] {
    return (rows ?? []).filter((row) => {
      const reason = unstorableText(row);
      if (reason) this.skip(kind, row.source_id, reason);
      return !reason;
    });
  }

  /** Counted, and kept to show: its id and reason made storable (a source's text may hold what jsonb refuses). */
  skip(kind: ImportKind, sourceId: string, reason: string): void {
    this.counts[kind].skipped++;
    if (this.skipped.length < SKIPPED_KEPT)
      this.skipped.push({ kind, source_id: printable(sourceId), reason: printable(reason) });
  }

  async known(kind: ImportKind, sourceId: string): Promise<string | undefined> {
    const row = await this.db.one(
      sql<{
        row_id: string;
      }>`select row_id from import_rows where organization_id = ${this.target.organizationId} and program_id = ${this.target.programId} and source = ${this.target.source} and kind = ${kind} and source_id = ${sourceId}`,
    );
    return row?.row_id;
  }

  async remember(kind: ImportKind, sourceId: string, rowId: string): Promise<void> {
    await this.db.rows(
      sql`insert into import_rows (organization_id, program_id, source, kind, source_id, row_id, import_id) values (${this.target.organizationId}, ${this.target.programId}, ${this.target.source}, ${kind}, ${sourceId}, ${rowId}, ${this.target.importId}) on conflict do nothing`,
    );
  }

  /** A token free for this partner: no other partner's slug or alias here (one namespace: link-tokens.ts). */
  private async tokenFree(token: string, affiliateId: string | null): Promise<boolean> {
    const holder = await tokenHolder(this.db, this.target.organizationId, token);
    return holder === undefined || holder === affiliateId;
  }

  private async affiliate(a: SourceAffiliate): Promise<void> {
    const { organizationId, programId, importId } = this.target;
    if (await this.known('affiliates', a.source_id)) {
      this.counts.affiliates.already_present++;
      return;
    }
    // Our slugs are lowercase (the resolver lowercases `ref`), 2 to 64 of [a-z0-9-].
    const tokens = [...new Set(a.tokens.map((t) => t.toLowerCase()))];
    for (const t of tokens.filter((t) => !SLUG_PATTERN.test(t)))
      this.skip(
        'affiliates',
        a.source_id,
        `link token "${t}" cannot be a slug here (2 to 64 of a-z, 0-9, "-"): that link will not attribute`,
      );
    const usable = tokens.filter((t) => SLUG_PATTERN.test(t));
    const existing = await this.db.one(
      sql<{
        id: string;
      }>`select id from affiliates where organization_id = ${organizationId} and program_id = ${programId} and email = ${a.email}`,
    );
    let affiliateId: string;
    if (existing) {
      affiliateId = existing.id;
      this.counts.affiliates.already_present++;
    } else {
      // The first free token becomes the slug, else a generated one. Each is tried in a savepoint:
      // one a concurrent request took since (the key decides: link-tokens.ts) is passed over.
      const candidates: string[] = [];
      for (const t of usable) if (await this.tokenFree(t, null)) candidates.push(t);
      affiliateId = randomUUID();
      // A partner already here by e-mail brings their tax form to the new membership (tax-forms/partner-form.ts).
      await lockPartnerForm(this.db, organizationId, a.email);
      const form = await partnerFormOf(this.db, organizationId, a.email);
      for (let attempt = 0; ; attempt++) {
        if (attempt >= candidates.length + SLUG_ATTEMPTS) throw new Error('could not allocate a unique slug');
        const slug = candidates[attempt] ?? generateSlug(a.email);
        const id = affiliateId;
        try {
          await this.db.transaction(async (sp) => {
            await sp.rows(sql`insert into affiliates (id, organization_id, program_id, email, name, slug, status, payout_email, import_id,
                 tax_form_status, tax_form_kind, tax_form_submitted_at, tax_form_decided_at, tax_form_rejection_reason, created_at)
               values (${id}, ${organizationId}, ${programId}, ${a.email}, ${a.name}, ${slug}, ${a.status}, ${a.payout_email}, ${importId}, ${form.tax_form_status}, ${form.tax_form_kind}, ${form.tax_form_submitted_at}, ${form.tax_form_decided_at}, ${form.tax_form_rejection_reason}, coalesce(${a.created_at ?? null}::timestamptz, now()))`);
            await holdToken(sp, { organizationId, affiliateId: id, programId }, slug);
          });
          break;
        } catch (err) {
          if (!isTokenTaken(err) && !(err instanceof TokenTakenError)) throw err;
        }
      }
      this.counts.affiliates.created++;
    }
    for (const token of usable) {
      const holder = await tokenHolder(this.db, organizationId, token);
      if (holder === affiliateId) continue;
      // Held by another partner (or taken by one concurrently, which the key decides): reported, never taken over.
      const taken = holder !== undefined || !(await this.holdToken(token, affiliateId));
      if (taken) {
        this.skip(
          'affiliates',
          a.source_id,
          `link token "${token}" is already another partner's link here: it keeps attributing to that partner`,
        );
        continue;
      }
      await this.db.rows(
        sql`insert into affiliate_link_aliases (organization_id, token, affiliate_id, program_id, import_id) values (${organizationId}, ${token}, ${affiliateId}, ${programId}, ${importId})`,
      );
    }
    await this.remember('affiliates', a.source_id, affiliateId);
  }

  /** Holds `token` for the partner; false when another partner holds it. */
  private async holdToken(token: string, affiliateId: string): Promise<boolean> {
    const { organizationId, programId } = this.target;
    try {
      await holdToken(this.db, { organizationId, affiliateId, programId }, token);
      return true;
    } catch (err) {
      if (err instanceof TokenTakenError) return false;
      throw err;
    }
  }

  private async affiliateRow(sourceId: string): Promise<string | undefined> {
    return this.known('affiliates', sourceId);
  }

  /**
   * The customer's row here, written when new; undefined when it cannot be (skipped). `listed`:
   * the source listed it as a row of its own (counted when already here); a sale's customer seen
   * before in this import is only a reference.
   */
  async customer(c: SourceCustomer, listed = true, saleAt: Date | null = null): Promise<string | undefined> {
    const { organizationId, programId, importId } = this.target;
    const known = await this.known('customers', c.source_id);
    if (known) {
      if (listed) this.counts.customers.already_present++;
      return known;
    }
    const affiliateId = await this.affiliateRow(c.affiliate_source_id);
    if (!affiliateId) {
      this.skip('customers', c.source_id, `its affiliate ${c.affiliate_source_id} was not imported`);
      return undefined;
    }
    // A signup until an imported sale of theirs makes them a paying customer (conversion()).
    const inserted = await this.db.one(sql<{
      id: string;
    }>`insert into customers (id, organization_id, customer_id, status, affiliate_id, program_id, email, name, import_id, created_at)
       values (${randomUUID()}, ${organizationId}, ${c.customer_id}, 'trial', ${affiliateId}, ${programId}, ${c.email}, ${c.name}, ${importId}, coalesce(${c.created_at ?? saleAt}::timestamptz, now())) on conflict (customer_id, organization_id) do nothing returning id`);
    let id = inserted?.id;
    if (id) {
      this.counts.customers.created++;
      this.fresh.customers.push(id);
    } else {
      // Already a customer here (tracked before the import): its attribution stays as it is.
      id = (await this.db.one(
        sql<{
          id: string;
        }>`select id from customers where organization_id = ${organizationId} and customer_id = ${c.customer_id}`,
      ))!.id;
      this.counts.customers.already_present++;
    }
    await this.remember('customers', c.source_id, id);
    return id;
  }

  private async payout(p: SourcePayout): Promise<void> {
    const { organizationId, programId, importId } = this.target;
    if (await this.known('payouts', p.source_id)) {
      this.counts.payouts.already_present++;
      return;
    }
    const affiliateId = await this.affiliateRow(p.affiliate_source_id);
    if (!affiliateId)
      return this.skip('payouts', p.source_id, `its affiliate ${p.affiliate_source_id} was not imported`);
    if (!(Number(p.amount) > 0)) return this.skip('payouts', p.source_id, `amount ${p.amount} is not above 0`);
    const id = randomUUID();
    await this.db
      .rows(sql`insert into payouts (id, organization_id, affiliate_id, program_id, currency, amount, status, commission_count, paid_at, import_id, created_at)
       values (${id}, ${organizationId}, ${affiliateId}, ${programId}, ${p.currency}, ${p.amount}, 'paid', ${p.commission_source_ids.length}, ${p.paid_at}, ${importId}, ${p.paid_at})`);
    this.counts.payouts.created++;
    await this.remember('payouts', p.source_id, id);
    // Which payout carried each commission, for the commissions phase (and a resumed job).
    for (const commission of p.commission_source_ids) await this.remember('payouts', `commission:${commission}`, id);
  }

  private async commission(c: SourceCommission): Promise<void> {
    const { organizationId, programId, importId } = this.target;
    if (await this.known('commissions', c.source_id)) {
      this.counts.commissions.already_present++;
      // Its sale is here too: counted as such (a rerun finds every conversion already here).
      if (await this.known('conversions', c.sale.source_id)) this.counts.conversions.already_present++;
      return;
    }
    const affiliateId = await this.affiliateRow(c.affiliate_source_id);
    if (!affiliateId)
      return this.skip('commissions', c.source_id, `its affiliate ${c.affiliate_source_id} was not imported`);
    // A reversed commission of 0 (Tolt zeroes a commission whose sale was refunded before it was
    // paid): its sale is history all the same, kept with its refund; no entry of 0 is written.
    if (Number(c.amount) === 0 && c.status === 'reversed') {
      if (await writeConversion(this, c, affiliateId))
        return this.skip('commissions', c.source_id, `amount 0 (reversed at the source): its sale is kept, refunded`);
      return this.skip('commissions', c.source_id, `its sale ${c.sale.source_id} could not be imported`);
    }
    if (!(Number(c.amount) > 0)) return this.skip('commissions', c.source_id, `amount ${c.amount} is not above 0`);
    const conversionId = await writeConversion(this, c, affiliateId);
    if (!conversionId)
      return this.skip('commissions', c.source_id, `its sale ${c.sale.source_id} could not be imported`);
    const taken = await this.db.one(
      sql`select 1 from commissions where organization_id = ${organizationId} and conversion_id = ${conversionId} and type = 'sale'`,
    );
    if (taken)
      return this.skip(
        'commissions',
        c.source_id,
        `its sale ${c.sale.source_id} already has a commission here (one per sale)`,
      );
    let payoutId: string | null = null;
    if (c.status === 'paid') {
      payoutId =
        (c.payout_source_id ? await this.known('payouts', c.payout_source_id) : undefined) ??
        (await this.known('payouts', `commission:${c.source_id}`)) ??
        null;
    }
    const id = randomUUID();
    await this.db
      .rows(sql`insert into commissions (id, organization_id, type, status, amount, currency, affiliate_id, program_id, conversion_id, customer_id, approves_at, approved_at, import_id, created_at)
       values (${id}, ${organizationId}, 'sale', ${c.status}, ${c.amount}, ${c.currency}, ${affiliateId}, ${programId}, ${conversionId}, ${c.sale.customer?.customer_id ?? null}, ${c.approves_at}, ${c.approved_at}, ${importId}, ${c.created_at ?? c.sale.occurred_at})`);
    this.fresh.commissions.push(id);
    // The payout that paid it: payout_items is the one record of which payout holds an entry.
    if (payoutId)
      await this.db.rows(
        sql`insert into payout_items (organization_id, commission_id, payout_id) values (${organizationId}, ${id}, ${payoutId})`,
      );
    this.counts.commissions.created++;
    await this.remember('commissions', c.source_id, id);
  }
}
