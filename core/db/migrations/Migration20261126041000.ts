import { Migration } from '@mikro-orm/migrations';

/**
 * A refresh token an ad platform issued in place of the configured one (Microsoft Advertising rotates them), per site
 * and platform, under a hash of the configured credentials (`basis`): core/delivery/queries/credentials.ts.
 */
export class Migration20261126041000 extends Migration {

  override async up(): Promise<void> {
    this.addSql(`create table "platform_credentials" ("site_id" varchar(64) not null, "platform" varchar(64) not null, "basis" varchar(128) not null, "issued_token" text not null, "updated_at" timestamptz(6) not null default now(), constraint "platform_credentials_pkey" primary key ("site_id", "platform"));`);
  }

  override async down(): Promise<void> {
    this.addSql(`drop table if exists "platform_credentials" cascade;`);
  }

}
