import { Migration } from '@mikro-orm/migrations';

export class Migration20261125190547 extends Migration {

  override async up(): Promise<void> {
    this.addSql(`alter table "visits" add column "email_hashes" text[] null;`);
    // Written by hand: a visit identified before keeps the one identity it still has (earlier ones were overwritten).
    this.addSql(`update "visits" set "email_hashes" = array["email_hash"] where "email_hash" is not null;`);
    this.addSql(`create index "visits_email_hashes_index" on "visits" using gin ("email_hashes") where "email_hashes" is not null;`);
  }

  override async down(): Promise<void> {
    this.addSql(`drop index "visits_email_hashes_index";`);
    this.addSql(`alter table "visits" drop column "email_hashes";`);
  }

}
