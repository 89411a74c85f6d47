import { Migration } from '@mikro-orm/migrations';

/**
 * Issue 18: a conversion records its order's refunds and cancellations (core/delivery/queries/refunds.ts): when the
 * first one was made, the amount refunded so far, and the refund ids already counted.
 */
export class Migration20261126013652 extends Migration {

  override async up(): Promise<void> {
    this.addSql(`alter table "conversions" add column "refunded_at" timestamptz(6) null, add column "refunded_value" double precision null, add column "refund_ids" text[] null;`);
  }

  override async down(): Promise<void> {
    this.addSql(`alter table "conversions" drop column "refunded_at", drop column "refunded_value", drop column "refund_ids";`);
  }

}
