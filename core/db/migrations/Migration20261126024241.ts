import { Migration } from '@mikro-orm/migrations';

/**
 * Issue 18: refunds told to the platforms are deliveries too (`kind` adjustment, keyed by refund id so one refund is
 * written once per conversion and platform), and a delivery row may say which rule shaped its request (`note`).
 * A constant default adds the column without rewriting the table (PostgreSQL 11+).
 */
export class Migration20261126024241 extends Migration {

  override async up(): Promise<void> {
    this.addSql(`alter table "deliveries" add column "kind" varchar(16) not null default 'conversion', add column "refund_id" varchar(255) null, add column "adjustment" jsonb null, add column "note" text null;`);
    this.addSql(`alter table "deliveries" add constraint "deliveries_refund_unique" unique ("conversion_id", "provider", "refund_id");`);
  }

  override async down(): Promise<void> {
    this.addSql(`alter table "deliveries" drop constraint "deliveries_refund_unique";`);
    this.addSql(`alter table "deliveries" drop column "kind", drop column "refund_id", drop column "adjustment", drop column "note";`);
  }

}
