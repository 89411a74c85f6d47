import { Migration } from '@mikro-orm/migrations';

/**
 * Issue 24: a delivery a platform took and judges later (Google's requestStatus:retrieve), with the request id, the
 * next look and what the platform said (core/delivery/diagnostics.ts).
 */
export class Migration20261128090000 extends Migration {

  override async up(): Promise<void> {
    this.addSql(`create table "delivery_diagnostics" ("delivery_id" uuid not null, "site_id" varchar(64) not null, "provider" varchar(32) not null, "receipt" varchar(255) not null, "requested_at" timestamptz(6) not null, "due_at" timestamptz(6) null, "diagnosis" text null, "updated_at" timestamptz(6) not null default now(), constraint "delivery_diagnostics_pkey" primary key ("delivery_id"));`);
    this.addSql(`create index "delivery_diagnostics_due_index" on "delivery_diagnostics" ("due_at") where "due_at" is not null;`);
  }

  override async down(): Promise<void> {
    this.addSql(`drop table if exists "delivery_diagnostics" cascade;`);
  }

}
