import { Migration } from '@mikro-orm/migrations';

export class Migration20261121092039 extends Migration {

  override async up(): Promise<void> {
    this.addSql(`create table "deletion_requests" ("id" uuid not null, "site_id" varchar(64) not null, "code" varchar(64) not null, "source" varchar(16) not null, "status" varchar(16) not null, "email" varchar(255) null, "email_key" varchar(64) null, "masked_email" varchar(255) not null, "token_hash" varchar(64) null, "page_url" text null, "received_at" timestamptz(6) not null default now(), "processing_at" timestamptz(6) null, "completed_at" timestamptz(6) null, "hard_purge_at" timestamptz(6) not null, "purged_at" timestamptz(6) null, "locked_until" timestamptz(6) null, "integrations_affected" int not null default 0, "session_records_anonymised" int not null default 0, "completion_email_sent_at" timestamptz(6) null, "merchant_log" jsonb not null default '[]', constraint "deletion_requests_pkey" primary key ("id"));`);
    this.addSql(`create index "deletion_requests_site_id_email_key_index" on "deletion_requests" ("site_id", "email_key");`);
    this.addSql(`create index "deletion_requests_hard_purge_at_index" on "deletion_requests" ("hard_purge_at");`);
    this.addSql(`alter table "deletion_requests" add constraint "deletion_requests_code_unique" unique ("code");`);
    this.addSql(`alter table "deletion_requests" add constraint "deletion_requests_token_hash_unique" unique ("token_hash");`);
  }

  override async down(): Promise<void> {
    this.addSql(`drop table if exists "deletion_requests" cascade;`);
  }

}
