import { Migration } from '@mikro-orm/migrations';

export class Migration20261121062221 extends Migration {

  override async up(): Promise<void> {
    this.addSql(`create table "sites" ("id" varchar(64) not null, "name" varchar(255) not null, "cop_key" varchar(64) not null, "release_secret" varchar(128) not null, "status" varchar(16) not null, "plan" varchar(16) not null, "removed_at" timestamptz(6) null, "created_at" timestamptz(6) not null default now(), "updated_at" timestamptz(6) not null default now(), constraint "sites_pkey" primary key ("id"));`);
    this.addSql(`alter table "sites" add constraint "sites_cop_key_unique" unique ("cop_key");`);

    this.addSql(`create table "api_keys" ("id" uuid not null, "site_id" varchar(64) not null, "name" varchar(200) not null, "prefix" varchar(12) not null, "hash" varchar(64) not null, "created_at" timestamptz(6) not null default now(), "last_used_at" timestamptz(6) null, constraint "api_keys_pkey" primary key ("id"));`);
    this.addSql(`alter table "api_keys" add constraint "api_keys_hash_unique" unique ("hash");`);
    this.addSql(`create index "api_keys_site_id_created_at_index" on "api_keys" ("site_id", "created_at");`);

    this.addSql(`alter table "api_keys" add constraint "api_keys_site_id_foreign" foreign key ("site_id") references "sites" ("id") on update cascade;`);
  }

  override async down(): Promise<void> {
    this.addSql(`alter table "api_keys" drop constraint "api_keys_site_id_foreign";`);

    this.addSql(`drop table if exists "sites" cascade;`);

    this.addSql(`drop table if exists "api_keys" cascade;`);
  }

}
