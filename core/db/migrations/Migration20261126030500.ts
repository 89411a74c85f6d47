import { Migration } from '@mikro-orm/migrations';

/**
 * Issue 18: a refund that arrives before its order is kept (`pending_refunds`, core/delivery/queries/refunds.ts) and
 * applied when a conversion of the order is stored; purged after 30 days (the created_at index).
 */
export class Migration20261126030500 extends Migration {

  override async up(): Promise<void> {
    this.addSql(`create table "pending_refunds" ("site_id" varchar(64) not null, "order_id" varchar(255) not null, "refund_id" varchar(255) not null, "message_id" varchar(255) null, "amount" double precision null, "currency" varchar(3) null, "refunded_at" timestamptz(6) not null, "created_at" timestamptz(6) not null default now(), constraint "pending_refunds_pkey" primary key ("site_id", "order_id", "refund_id"));`);
    this.addSql(`create index "pending_refunds_created_at_index" on "pending_refunds" ("created_at");`);
  }

  override async down(): Promise<void> {
    this.addSql(`drop table if exists "pending_refunds" cascade;`);
  }

}
