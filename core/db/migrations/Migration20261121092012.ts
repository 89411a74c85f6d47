import { Migration } from '@mikro-orm/migrations';

// email-risk: stored assessments and the email-check quota (lifetime and per month).
export class Migration20261121092012 extends Migration {

  override async up(): Promise<void> {
    this.addSql(`create table "email_check_months" ("site_id" varchar(64) not null, "month" varchar(7) not null, "checks" int not null default 0, "billable" int not null default 0, constraint "email_check_months_pkey" primary key ("site_id", "month"));`);

    this.addSql(`create table "email_check_quotas" ("site_id" varchar(64) not null, "checks" int not null default 0, "billable" int not null default 0, "first_check_at" timestamptz(6) not null default now(), "last_check_at" timestamptz(6) not null default now(), constraint "email_check_quotas_pkey" primary key ("site_id"));`);

    this.addSql(`create table "email_risk_results" ("id" uuid not null, "site_id" varchar(64) not null, "email_hash" varchar(64) not null, "email_info" jsonb not null, "device" jsonb null, "checked_at" timestamptz(6) not null default now(), constraint "email_risk_results_pkey" primary key ("id"));`);
    this.addSql(`alter table "email_risk_results" add constraint "email_risk_results_site_id_email_hash_unique" unique ("site_id", "email_hash");`);
  }

  override async down(): Promise<void> {
    this.addSql(`drop table if exists "email_check_months" cascade;`);

    this.addSql(`drop table if exists "email_check_quotas" cascade;`);

    this.addSql(`drop table if exists "email_risk_results" cascade;`);
  }

}
