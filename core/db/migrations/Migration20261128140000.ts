import { Migration } from '@mikro-orm/migrations';

/** Sites made in the dashboard (core/sites/managed.ts); config-file sites never have a row here. */
export class Migration20261128140000 extends Migration {

  override async up(): Promise<void> {
    this.addSql(`create table "managed_sites" ("id" varchar(64) not null, "settings" jsonb not null, "sealed" text not null, "created_by" varchar(320) not null, "created_at" timestamptz(6) not null default now(), "updated_at" timestamptz(6) not null default now(), constraint "managed_sites_pkey" primary key ("id"));`);
  }

  override async down(): Promise<void> {
    this.addSql(`drop table if exists "managed_sites" cascade;`);
  }

}
