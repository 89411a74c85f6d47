import { Migration } from '@mikro-orm/migrations';

/** Consent per purpose (core/consent/purposes.ts): the visit's, and the one that decided a conversion with its rule. */
export class Migration20261128093000 extends Migration {

  override async up(): Promise<void> {
    this.addSql(`alter table "visits" add column "consent_purposes" jsonb null;`);

    this.addSql(`alter table "conversions" add column "consent_purposes" jsonb null;`);
  }

  override async down(): Promise<void> {
    this.addSql(`alter table "visits" drop column "consent_purposes";`);

    this.addSql(`alter table "conversions" drop column "consent_purposes";`);
  }

}
