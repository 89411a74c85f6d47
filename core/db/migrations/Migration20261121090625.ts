import { Migration } from '@mikro-orm/migrations';

export class Migration20261121090625 extends Migration {

  override async up(): Promise<void> {
    this.addSql(`create table "crm_poll_state" ("site_id" varchar(64) not null, "poller" varchar(32) not null, "cursor" text null, "next_run_at" timestamptz(6) not null default now(), "locked_until" timestamptz(6) null, "last_run_at" timestamptz(6) null, "last_released" int not null default 0, "last_error" text null, constraint "crm_poll_state_pkey" primary key ("site_id", "poller"));`);
  }

  override async down(): Promise<void> {
    this.addSql(`drop table if exists "crm_poll_state" cascade;`);
  }

}
