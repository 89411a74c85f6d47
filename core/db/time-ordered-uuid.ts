/**
 * SQL for a new UUID whose first 48 bits are the time in ms (the layout of UUID version 7, RFC 9562), the rest random;
 * PostgreSQL 18 has `uuidv7()`, 15 to 17 do not. For rows written at the rate of conversions: a random (version 4) key
 * lands on any leaf of its B-tree, so every insert reads and dirties another page of an index that outgrows memory;
 * keys in time order all go to its right edge. Measured on a table of 1.6 million deliveries (docs/architecture.md,
 * "Cost of a conversion in PostgreSQL"). 74 bits stay random, so ids stay unguessable; the time they carry is the
 * row's `created_at` to the millisecond.
 */
export const TIME_ORDERED_UUID = `encode(set_bit(set_bit(overlay(uuid_send(gen_random_uuid())
  placing substring(int8send((extract(epoch from clock_timestamp()) * 1000)::bigint) from 3) from 1 for 6), 52, 1), 53, 1), 'hex')::uuid`
