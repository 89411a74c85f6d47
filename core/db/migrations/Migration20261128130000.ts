import { Migration } from '@mikro-orm/migrations';

const COLUMNS = `"id", "site_id", "session_id", "kind", "name", "url", "referrer", "title", "props", "occurred_at", "received_at"`;

/**
 * page_events becomes partitioned by range of received_at, one partition per UTC day (plugins/capture/store/partitions.ts),
 * so retention drops a day instead of deleting its rows one by one. Its key becomes (id, received_at): a partitioned
 * table's unique keys must hold the partition key.
 *
 * One transaction, writes locked out from the start (EXCLUSIVE: reads go on): no hit can land in the old table after
 * its rows were copied, and an erasure or a retention delete waits rather than acting on rows already copied. Hits
 * keep being acknowledged meanwhile (they wait in the capture journal); a writer blocked on the old name finds the
 * new table when the lock is released. The rows are copied with one INSERT…SELECT into partitions without indexes,
 * the indexes built after (one sorted build per partition is much cheaper than millions of index insertions), and
 * the counts compared before the old table is dropped. See docs/architecture.md, "Time-partitioned hits".
 */
export class Migration20261128130000 extends Migration {

  override async up(): Promise<void> {
    this.moveAside('page_events_unpartitioned');
    this.addSql(`create table "page_events" ("id" uuid not null, "site_id" varchar(64) not null, "session_id" varchar(128) null, "kind" varchar(16) not null, "name" varchar(255) null, "url" text not null, "referrer" text null, "title" varchar(500) null, "props" jsonb null, "occurred_at" timestamptz(6) not null, "received_at" timestamptz(6) not null) partition by range ("received_at");`);
    // A partition per UTC day from the oldest row's to a week ahead (the capture:partitions job keeps that week ahead).
    this.addSql(`do $$
declare day date;
begin
  for day in select generate_series(coalesce((select min("received_at") from "page_events_unpartitioned"), now()) at time zone 'UTC', (now() at time zone 'UTC') + interval '7 days', interval '1 day')::date loop
    execute format('create table %I partition of "page_events" for values from (%L) to (%L)',
      'page_events_p' || to_char(day, 'YYYYMMDD'), day::text || ' 00:00:00+00', (day + 1)::text || ' 00:00:00+00');
  end loop;
end $$;`);
    this.addSql(`create table "page_events_default" partition of "page_events" default;`);
    this.addSql(`insert into "page_events" (${COLUMNS}) select ${COLUMNS} from "page_events_unpartitioned";`);
    this.addSql(`do $$
begin
  if (select count(*) from "page_events") <> (select count(*) from "page_events_unpartitioned") then
    raise exception 'page_events: the partitioned copy does not hold every row';
  end if;
end $$;`);
    this.addSql(`alter table "page_events" add constraint "page_events_pkey" primary key ("id", "received_at");`);
    this.addSql(`create index "page_events_site_id_received_at_id_index" on "page_events" ("site_id", "received_at", "id");`);
    this.addSql(`create index "page_events_site_id_session_id_index" on "page_events" ("site_id", "session_id");`);
    this.addSql(`drop table "page_events_unpartitioned";`);
  }

  /** Writes locked out until the commit (reads go on), then the table and its key and indexes renamed out of the way. */
  private moveAside(name: string): void {
    this.addSql(`lock table "page_events" in exclusive mode;`);
    this.addSql(`alter table "page_events" rename to "${name}";`);
    this.addSql(`alter table "${name}" rename constraint "page_events_pkey" to "${name}_pkey";`);
    this.addSql(`alter index "page_events_site_id_received_at_id_index" rename to "${name}_site_received_index";`);
    this.addSql(`alter index "page_events_site_id_session_id_index" rename to "${name}_site_session_index";`);
  }

  override async down(): Promise<void> {
    this.moveAside('page_events_partitioned');
    this.addSql(`create table "page_events" ("id" uuid not null, "site_id" varchar(64) not null, "session_id" varchar(128) null, "kind" varchar(16) not null, "name" varchar(255) null, "url" text not null, "referrer" text null, "title" varchar(500) null, "props" jsonb null, "occurred_at" timestamptz(6) not null, "received_at" timestamptz(6) not null);`);
    // A hit sent again more than a day apart could be stored twice while partitioned (its key held received_at): the first copy stays.
    this.addSql(`insert into "page_events" (${COLUMNS}) select distinct on ("id") ${COLUMNS} from "page_events_partitioned" order by "id", "received_at";`);
    this.addSql(`alter table "page_events" add constraint "page_events_pkey" primary key ("id");`);
    this.addSql(`create index "page_events_site_id_received_at_id_index" on "page_events" ("site_id", "received_at", "id");`);
    this.addSql(`create index "page_events_site_id_session_id_index" on "page_events" ("site_id", "session_id");`);
    this.addSql(`drop table "page_events_partitioned" cascade;`);
  }

}
