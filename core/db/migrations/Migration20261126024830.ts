import { Migration } from '@mikro-orm/migrations';

export class Migration20261126024830 extends Migration {

  override async up(): Promise<void> {
    this.addSql(`create table "dashboard_audit" ("id" uuid not null default gen_random_uuid(), "site_id" varchar(64) null, "actor" varchar(320) not null, "action" varchar(100) not null, "detail" varchar(1000) null, "created_at" timestamptz(6) not null default now(), constraint "dashboard_audit_pkey" primary key ("id"));`);
    this.addSql(`create index "dashboard_audit_site_id_created_at_id_index" on "dashboard_audit" ("site_id", "created_at", "id");`);
    this.addSql(`create index "dashboard_audit_created_at_index" on "dashboard_audit" ("created_at");`);
  }

  override async down(): Promise<void> {
    this.addSql(`drop table if exists "dashboard_audit" cascade;`);
  }

}
