import { Migration } from '@mikro-orm/migrations';

/**
 * The worker claims due rows per platform account (issue 17): a partial index over unsettled rows by site, provider
 * and due time replaces the index on (status, next_attempt_at), and deliveries leave a fifth of each page free so the
 * claim (locked_until, attempts, updated_at: no indexed column) is a HOT update that writes no index entry.
 * Conversions likewise, for the update that clears IP and user agent once every delivery has ended.
 */
export class Migration20261126010000 extends Migration {

  override async up(): Promise<void> {
    this.addSql(`drop index if exists "deliveries_status_next_attempt_at_index";`);
    this.addSql(`create index "deliveries_due_index" on "deliveries" ("site_id", "provider", "next_attempt_at") where "status" in ('pending', 'retrying');`);
    this.addSql(`alter table "deliveries" set (fillfactor = 80);`);
    this.addSql(`alter table "conversions" set (fillfactor = 80);`);
  }

  override async down(): Promise<void> {
    this.addSql(`alter table "deliveries" reset (fillfactor);`);
    this.addSql(`alter table "conversions" reset (fillfactor);`);
    this.addSql(`drop index if exists "deliveries_due_index";`);
    this.addSql(`create index "deliveries_status_next_attempt_at_index" on "deliveries" ("status", "next_attempt_at");`);
  }

}
