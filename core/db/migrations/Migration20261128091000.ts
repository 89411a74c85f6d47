import { Migration } from '@mikro-orm/migrations';

/**
 * Personal fields a platform takes in clear (LinkedIn's names, company and title; Google's postal code), kept like the
 * IP address; and when a conversion's clear fields were erased: a retry after it is refused instead of sent without
 * them (core/delivery/clear-fields.ts). The partial index finds the conversions still holding clear fields
 * once their retry window has passed.
 */
export class Migration20261128091000 extends Migration {

  override async up(): Promise<void> {
    this.addSql(`alter table "conversions" add column "clear_traits" jsonb null, add column "clear_erased_at" timestamptz(6) null;`);
    this.addSql(`create index "conversions_clear_fields_index" on "conversions" ("created_at") where ip is not null or user_agent is not null or clear_traits is not null;`);
  }

  override async down(): Promise<void> {
    this.addSql(`drop index if exists "conversions_clear_fields_index";`);
    this.addSql(`alter table "conversions" drop column if exists "clear_traits", drop column if exists "clear_erased_at";`);
  }

}
