import { Migration } from '@mikro-orm/migrations';

export class Migration20261126001534 extends Migration {

  override async up(): Promise<void> {
    this.addSql(`alter table "conversions" add column "us_privacy" jsonb null;`);

    this.addSql(`alter table "visits" add column "gpc" boolean not null default false;`);
  }

  override async down(): Promise<void> {
    this.addSql(`alter table "conversions" drop column "us_privacy";`);

    this.addSql(`alter table "visits" drop column "gpc";`);
  }

}
