import { Migration } from '@mikro-orm/migrations';

export class Migration20261121080809 extends Migration {

  override async up(): Promise<void> {
    this.addSql(`alter table "conversions" add column "source_event_type" varchar(64) null, add column "country" varchar(2) null, add column "content_name" varchar(500) null, add column "content_category" varchar(255) null;`);
  }

  override async down(): Promise<void> {
    this.addSql(`alter table "conversions" drop column "source_event_type", drop column "country", drop column "content_name", drop column "content_category";`);
  }

}
