import { Migration } from '@mikro-orm/migrations';

export class Migration20261121090450 extends Migration {

  override async up(): Promise<void> {
    this.addSql(`alter table "conversions" add column "held_email" varchar(255) null, add column "resolved_at" timestamptz(6) null;`);
    this.addSql(`create index "conversions_site_id_held_email_event_index" on "conversions" ("site_id", "held_email", "event");`);
  }

  override async down(): Promise<void> {
    this.addSql(`drop index "conversions_site_id_held_email_event_index";`);
    this.addSql(`alter table "conversions" drop column "held_email", drop column "resolved_at";`);
  }

}
