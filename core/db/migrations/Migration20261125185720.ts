import { Migration } from '@mikro-orm/migrations';

export class Migration20261125185720 extends Migration {

  override async up(): Promise<void> {
    this.addSql(`alter table "conversions" drop constraint "conversions_site_id_message_id_unique";`);

    this.addSql(`alter table "conversions" add column "trust" varchar(16) not null default 'trusted';`);
    // Written by hand: rows stored before the tiers existed. Pixel conversions are public; so are the automation
    // tools' `tracked` rows, which an unsigned body gives (a signed body claiming `tracked` is rare, and public only
    // means that a trusted copy of its id is stored beside it and goes to the platforms under its own id).
    this.addSql(`update "conversions" set "trust" = 'public' where "source" = 'pixel' or ("source" in ('zapier', 'make', 'n8n') and "confirmation" = 'tracked');`);
    this.addSql(`alter table "conversions" add constraint "conversions_site_id_message_id_trust_unique" unique ("site_id", "message_id", "trust");`);
  }

  override async down(): Promise<void> {
    this.addSql(`alter table "conversions" drop constraint "conversions_site_id_message_id_trust_unique";`);
    this.addSql(`alter table "conversions" drop column "trust";`);

    this.addSql(`alter table "conversions" add constraint "conversions_site_id_message_id_unique" unique ("site_id", "message_id");`);
  }

}
