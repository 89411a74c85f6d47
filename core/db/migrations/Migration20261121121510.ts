import { Migration } from '@mikro-orm/migrations';

export class Migration20261121121510 extends Migration {

  override async up(): Promise<void> {
    this.addSql(`create index "identified_users_site_id_last_seen_at_index" on "identified_users" ("site_id", "last_seen_at");`);
  }

  override async down(): Promise<void> {
    this.addSql(`drop index "identified_users_site_id_last_seen_at_index";`);
  }

}
