import { Migration } from '@mikro-orm/migrations';

export class Migration20261121100420 extends Migration {

  override async up(): Promise<void> {
    this.addSql(`create index "identified_users_site_id_device_hash_index" on "identified_users" ("site_id", "device_hash");`);
  }

  override async down(): Promise<void> {
    this.addSql(`drop index "identified_users_site_id_device_hash_index";`);
  }

}
