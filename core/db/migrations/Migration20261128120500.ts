import { Migration } from '@mikro-orm/migrations';

/** The dashboard's live events: the last requests per site, pruned to a few hundred each (plugins/dashboard/live/). */
export class Migration20261128120500 extends Migration {

  override async up(): Promise<void> {
    this.addSql(`create table "dashboard_live_requests" ("id" uuid not null default gen_random_uuid(), "site_id" varchar(64) not null, "at" timestamptz(6) not null, "kind" varchar(16) not null, "method" varchar(8) not null, "route" varchar(200) not null, "source" varchar(64) null, "status" int not null, "code" varchar(64) null, "reason" varchar(1000) null, "refused" int null, constraint "dashboard_live_requests_pkey" primary key ("id"));`);
    this.addSql(`create index "dashboard_live_requests_site_id_at_index" on "dashboard_live_requests" ("site_id", "at");`);
  }

  override async down(): Promise<void> {
    this.addSql(`drop table if exists "dashboard_live_requests" cascade;`);
  }

}
