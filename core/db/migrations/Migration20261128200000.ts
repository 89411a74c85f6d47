import { Migration } from '@mikro-orm/migrations';

/**
 * Issue 30: delivery rows written once. A conversion's inline attempt no longer inserts a pending row per platform
 * and updates it once attempted (two row versions, about ten index entries each); the conversion holds the deliveries
 * being attempted (`inline_deliveries`, their ids and platforms) until `inline_until`, the lease's end, and the record
 * of the attempt inserts each row once, in its final state. A sweep of the delivery worker turns the deliveries of a
 * conversion whose lease ran out (its process died mid-attempt) into pending rows with the same ids.
 * `all_deliveries` is what readers that must see a delivery under way read: the rows, and the deliveries an inline
 * attempt holds that have no row yet, as pending.
 */
export class Migration20261128200000 extends Migration {

  override async up(): Promise<void> {
    this.addSql(`alter table "conversions" add column "inline_until" timestamptz(6) null, add column "inline_deliveries" jsonb null;`);
    this.addSql(`create index "conversions_inline_index" on "conversions" ("inline_until") where "inline_until" is not null;`);
    this.addSql(`create view "all_deliveries" as
      select d.id, d.conversion_id, d.site_id, d.provider, d.kind, d.refund_id, d.adjustment, d.note, d.status, d.attempts,
        d.http_status, d.error, d.next_attempt_at, d.locked_until, d.last_duration_ms, d.sent_at, d.created_at, d.updated_at
      from "deliveries" d
      union all
      select h.id, c.id, c.site_id, h.provider::varchar(32), 'conversion'::varchar(16), null::varchar(255), null::jsonb, null::text,
        'pending'::varchar(16), 1, null::int, null::text, c.created_at, c.inline_until, null::int, null::timestamptz(6), c.created_at, c.created_at
      from "conversions" c cross join lateral jsonb_to_recordset(c.inline_deliveries) as h(id uuid, provider text)
      where c.inline_until is not null and not exists (select 1 from "deliveries" o where o.id = h.id);`);
  }

  override async down(): Promise<void> {
    // Deliveries an attempt holds become pending rows first, so going back loses none (the worker sends them).
    this.addSql(`insert into "deliveries" ("id", "conversion_id", "site_id", "provider", "status", "attempts", "next_attempt_at", "created_at", "updated_at")
      select h.id, c.id, c.site_id, h.provider, 'pending', 1, now(), c.created_at, now()
      from "conversions" c cross join lateral jsonb_to_recordset(c.inline_deliveries) as h(id uuid, provider text)
      where c.inline_until is not null on conflict ("id") do nothing;`);
    this.addSql(`drop view if exists "all_deliveries";`);
    this.addSql(`drop index if exists "conversions_inline_index";`);
    this.addSql(`alter table "conversions" drop column if exists "inline_until", drop column if exists "inline_deliveries";`);
  }

}
