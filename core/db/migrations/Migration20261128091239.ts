import { Migration } from '@mikro-orm/migrations';

/**
 * Issue 24: withdrawals of webhook conversions that wait before they are sent (a Stripe PaymentIntent that may pay a
 * subscription's invoice), one row per messageId (`conversion_waits`, core/delivery/queries/waits.ts).
 */
export class Migration20261128091239 extends Migration {

  override async up(): Promise<void> {
    this.addSql(`create table "conversion_waits" ("site_id" varchar(64) not null, "message_id" varchar(255) not null, "withdrawn_types" text[] not null default '{}', "reason" text null, "created_at" timestamptz(6) not null default now(), constraint "conversion_waits_pkey" primary key ("site_id", "message_id"));`);
    this.addSql(`create index "conversion_waits_created_at_index" on "conversion_waits" ("created_at");`);
  }

  override async down(): Promise<void> {
    this.addSql(`drop table if exists "conversion_waits" cascade;`);
  }

}
