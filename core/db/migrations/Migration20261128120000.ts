import { Migration } from '@mikro-orm/migrations';

/** Delivery health alerts' state per site, destination and cause (core/health/entity.ts). */
export class Migration20261128120000 extends Migration {

  override async up(): Promise<void> {
    this.addSql(`create table "delivery_alerts" ("site_id" varchar(64) not null, "provider" varchar(32) not null, "cause" varchar(16) not null, "active" boolean not null, "notified" boolean not null default false, "since" timestamptz(6) not null, "detail" text null, "alerted_at" timestamptz(6) null, "updated_at" timestamptz(6) not null default now(), constraint "delivery_alerts_pkey" primary key ("site_id", "provider", "cause"));`);
  }

  override async down(): Promise<void> {
    this.addSql(`drop table if exists "delivery_alerts" cascade;`);
  }

}
