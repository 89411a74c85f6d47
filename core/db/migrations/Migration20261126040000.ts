import { Migration } from '@mikro-orm/migrations';

export class Migration20261126040000 extends Migration {

  override async up(): Promise<void> {
    this.addSql(`create table "dashboard_used_links" ("token_hash" varchar(64) not null, "used_at" timestamptz(6) not null default now(), constraint "dashboard_used_links_pkey" primary key ("token_hash"));`);
    this.addSql(`create index "dashboard_used_links_used_at_index" on "dashboard_used_links" ("used_at");`);
  }

  override async down(): Promise<void> {
    this.addSql(`drop table if exists "dashboard_used_links" cascade;`);
  }

}
