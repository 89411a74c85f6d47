import { Migration } from '@mikro-orm/migrations';

export class Migration20261121091522 extends Migration {

  override async up(): Promise<void> {
    this.addSql(`create index "conversions_site_id_order_id_index" on "conversions" ("site_id", "order_id");`);

    this.addSql(`create index "deliveries_sent_paging_index" on "deliveries" ("site_id", "created_at", "conversion_id") where "status" = 'sent';`);
    this.addSql(`create index "deliveries_unsettled_index" on "deliveries" ("site_id", "created_at") where "status" in ('pending', 'retrying');`);

    this.addSql(`create index "visits_bot_paging_index" on "visits" ("site_id", "started_at", "id") where "is_bot";`);
    this.addSql(`create index "visits_vpn_proxy_paging_index" on "visits" ("site_id", "started_at", "id") where "is_vpn" or "is_proxy" or "is_tor";`);
  }

  override async down(): Promise<void> {
    this.addSql(`drop index "conversions_site_id_order_id_index";`);

    this.addSql(`drop index "deliveries_sent_paging_index";`);
    this.addSql(`drop index "deliveries_unsettled_index";`);

    this.addSql(`drop index "visits_bot_paging_index";`);
    this.addSql(`drop index "visits_vpn_proxy_paging_index";`);
  }

}
