import { Migration } from '@mikro-orm/migrations';

export class Migration20261121084042 extends Migration {

  override async up(): Promise<void> {
    this.addSql(`create table "identified_users" ("id" uuid not null, "site_id" varchar(64) not null, "email" varchar(255) not null, "email_hash" varchar(64) not null, "source" varchar(32) not null, "session_id" varchar(128) null, "visitor_id" varchar(64) null, "device_hash" varchar(64) null, "ip_country" varchar(2) null, "ip_is_vpn" boolean not null default false, "email_risk_score" int null, "email_risk_label" varchar(32) null, "is_disposable" boolean null, "identified_at" timestamptz(6) not null default now(), "last_seen_at" timestamptz(6) not null default now(), constraint "identified_users_pkey" primary key ("id"));`);
    this.addSql(`create index "identified_users_site_id_identified_at_id_index" on "identified_users" ("site_id", "identified_at", "id");`);
    this.addSql(`alter table "identified_users" add constraint "identified_users_site_id_email_hash_unique" unique ("site_id", "email_hash");`);

    this.addSql(`create table "page_events" ("id" uuid not null, "site_id" varchar(64) not null, "session_id" varchar(128) null, "kind" varchar(16) not null, "name" varchar(255) null, "url" text not null, "referrer" text null, "title" varchar(500) null, "props" jsonb null, "occurred_at" timestamptz(6) not null, "received_at" timestamptz(6) not null, constraint "page_events_pkey" primary key ("id"));`);
    this.addSql(`create index "page_events_site_id_received_at_id_index" on "page_events" ("site_id", "received_at", "id");`);
    this.addSql(`create index "page_events_site_id_session_id_index" on "page_events" ("site_id", "session_id");`);

    this.addSql(`drop index "visits_site_id_session_id_index";`);

    this.addSql(`alter table "visits" add column "visitor_id" varchar(64) null, add column "ended_at" timestamptz(6) null, add column "duration_ms" bigint not null default 0, add column "page_count" int not null default 0, add column "event_count" int not null default 0, add column "identified_at" timestamptz(6) null, add column "ip_address" varchar(64) null, add column "user_agent" text null, add column "country" varchar(2) null, add column "city" varchar(255) null, add column "isp" varchar(255) null, add column "organization" varchar(255) null, add column "asn" int null, add column "is_vpn" boolean not null default false, add column "is_proxy" boolean not null default false, add column "is_tor" boolean not null default false, add column "is_hosting" boolean not null default false, add column "platform" varchar(32) null, add column "browser" varchar(64) null, add column "os" varchar(64) null, add column "bot_reasons" jsonb not null default '[]', add column "referrer" text null, add column "landing_url" text null, add column "device_hash" varchar(64) null, add column "updated_at" timestamptz(6) not null default now();`);
    this.addSql(`alter table "visits" add constraint "visits_site_id_session_id_unique" unique ("site_id", "session_id");`);
  }

  override async down(): Promise<void> {
    this.addSql(`drop table if exists "identified_users" cascade;`);

    this.addSql(`drop table if exists "page_events" cascade;`);

    this.addSql(`alter table "visits" drop constraint "visits_site_id_session_id_unique";`);
    this.addSql(`alter table "visits" drop column "visitor_id", drop column "ended_at", drop column "duration_ms", drop column "page_count", drop column "event_count", drop column "identified_at", drop column "ip_address", drop column "user_agent", drop column "country", drop column "city", drop column "isp", drop column "organization", drop column "asn", drop column "is_vpn", drop column "is_proxy", drop column "is_tor", drop column "is_hosting", drop column "platform", drop column "browser", drop column "os", drop column "bot_reasons", drop column "referrer", drop column "landing_url", drop column "device_hash", drop column "updated_at";`);

    this.addSql(`create index "visits_site_id_session_id_index" on "visits" ("site_id", "session_id");`);
  }

}
