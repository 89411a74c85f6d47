import { Migration } from '@mikro-orm/migrations';

export class Migration20261125212830 extends Migration {

  override async up(): Promise<void> {
    this.addSql(`create table "job_leases" ("name" varchar(100) not null, "holder" varchar(64) not null, "locked_until" timestamptz(6) not null, "next_run_at" timestamptz(6) not null, "last_run_at" timestamptz(6) null, "last_error" varchar(300) null, constraint "job_leases_pkey" primary key ("name"));`);
  }

  override async down(): Promise<void> {
    this.addSql(`drop table if exists "job_leases" cascade;`);
  }

}
