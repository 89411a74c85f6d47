import { Migration } from '@mikro-orm/migrations';

/**
 * Issue 18: a CRM poller keeps the newest refresh token the CRM issued (Salesforce's refresh-token rotation) in its
 * crm_poll_state row, with the hash of the configured credentials it descends from.
 */
export class Migration20261126013041 extends Migration {

  override async up(): Promise<void> {
    this.addSql(`alter table "crm_poll_state" add column "issued_token" text null, add column "issued_for" varchar(64) null;`);
  }

  override async down(): Promise<void> {
    this.addSql(`alter table "crm_poll_state" drop column "issued_token", drop column "issued_for";`);
  }

}
