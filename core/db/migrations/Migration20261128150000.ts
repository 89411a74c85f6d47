import { Migration } from '@mikro-orm/migrations';

/**
 * Issue 30: each conversion inserts a delivery row per platform and updates it once attempted, and the update changes
 * `status` (in the partial indexes' predicates), so it is never HOT: every index of deliveries costs an entry per
 * insert and per attempt. The index on (conversion_id) repeats the first column of deliveries_refund_unique
 * (conversion_id, provider, refund_id), which serves the same lookups; dropping it saves two index entries per delivery.
 * The release plugin's index on (site_id, held_email, event) is read only for held conversions (`state = 'held'` in
 * every statement that uses it): partial, it takes no entry for the others, which are nearly all of them.
 */
export class Migration20261128150000 extends Migration {

  override async up(): Promise<void> {
    this.addSql(`drop index if exists "deliveries_conversion_id_index";`);
    this.addSql(`drop index if exists "conversions_site_id_held_email_event_index";`);
    this.addSql(`create index "conversions_held_index" on "conversions" ("site_id", "held_email", "event") where "state" = 'held';`);
  }

  override async down(): Promise<void> {
    this.addSql(`create index if not exists "deliveries_conversion_id_index" on "deliveries" ("conversion_id");`);
    this.addSql(`drop index if exists "conversions_held_index";`);
    this.addSql(`create index "conversions_site_id_held_email_event_index" on "conversions" ("site_id", "held_email", "event");`);
  }

}
