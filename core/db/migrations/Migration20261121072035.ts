import { Migration } from '@mikro-orm/migrations';

export class Migration20261121072035 extends Migration {

  override async up(): Promise<void> {
    this.addSql(`create table "conversions" ("id" uuid not null, "site_id" varchar(64) not null, "message_id" varchar(255) not null, "source" varchar(64) not null, "event" varchar(255) not null, "standard_event" varchar(32) null, "occurred_at" timestamptz(6) not null, "value" double precision null, "currency" varchar(3) null, "order_id" varchar(255) null, "channel" varchar(16) not null, "items" jsonb not null default '[]', "identity" jsonb not null default '{}', "click_ids" jsonb not null default '{}', "user_id" varchar(255) null, "anonymous_id" varchar(255) null, "session_id" varchar(128) null, "page_url" text null, "ip" varchar(64) null, "user_agent" text null, "consent" varchar(16) not null default 'unknown', "is_bot" boolean not null default false, "confirmation" varchar(32) not null, "state" varchar(16) not null, "created_at" timestamptz(6) not null default now(), constraint "conversions_pkey" primary key ("id"));`);
    this.addSql(`create index "conversions_site_id_created_at_id_index" on "conversions" ("site_id", "created_at", "id");`);
    this.addSql(`alter table "conversions" add constraint "conversions_site_id_message_id_unique" unique ("site_id", "message_id");`);

    this.addSql(`create table "deliveries" ("id" uuid not null, "conversion_id" uuid not null, "site_id" varchar(64) not null, "provider" varchar(32) not null, "status" varchar(16) not null, "attempts" int not null default 0, "http_status" int null, "error" text null, "next_attempt_at" timestamptz(6) not null default now(), "locked_until" timestamptz(6) null, "last_duration_ms" int null, "sent_at" timestamptz(6) null, "created_at" timestamptz(6) not null default now(), "updated_at" timestamptz(6) not null default now(), constraint "deliveries_pkey" primary key ("id"));`);
    this.addSql(`create index "deliveries_status_next_attempt_at_index" on "deliveries" ("status", "next_attempt_at");`);
    this.addSql(`create index "deliveries_site_id_created_at_id_index" on "deliveries" ("site_id", "created_at", "id");`);
    this.addSql(`create index "deliveries_conversion_id_index" on "deliveries" ("conversion_id");`);

    this.addSql(`create table "visits" ("id" uuid not null, "site_id" varchar(64) not null, "session_id" varchar(128) not null, "started_at" timestamptz(6) not null default now(), "email_hash" varchar(64) null, "email" varchar(255) null, "phone" varchar(64) null, "first_name" varchar(255) null, "last_name" varchar(255) null, "click_ids" jsonb not null default '{}', "consent" varchar(16) not null default 'unknown', "is_bot" boolean not null default false, constraint "visits_pkey" primary key ("id"));`);
    this.addSql(`create index "visits_site_id_session_id_index" on "visits" ("site_id", "session_id");`);
    this.addSql(`create index "visits_site_id_email_hash_index" on "visits" ("site_id", "email_hash");`);
    this.addSql(`create index "visits_site_id_started_at_id_index" on "visits" ("site_id", "started_at", "id");`);
  }

  override async down(): Promise<void> {
    this.addSql(`drop table if exists "conversions" cascade;`);

    this.addSql(`drop table if exists "deliveries" cascade;`);

    this.addSql(`drop table if exists "visits" cascade;`);
  }

}
