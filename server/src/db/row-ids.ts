import { randomFillSync } from 'node:crypto';
import { v7 } from 'uuid';

/**
 * The id of every row the service's modules create in code (better-auth names its own rows; rows a
 * statement makes itself, payouts and outbound events, keep PostgreSQL's gen_random_uuid(): version
 * 15 has no UUIDv7 function): a UUIDv7 (RFC 9562) from the `uuid` package: the creation time in
 * milliseconds (48 bits), a counter started at random each millisecond (31 bits; ids made in the
 * same millisecond by one process increase) and 42 fresh random bits. Ids are not secrets here:
 * sign-in links, sessions and API keys are found by the hash of a separate random token, never by id.
 *
 * Why time-ordered: every table's primary key is a btree on (id, organization_id), and a new
 * conversion also lands in its sale entry's unique (conversion_id, organization_id). With random
 * (v4) ids each insert descends to a random leaf page of each such index, so as a table grows past
 * what stays hot in memory every write reads and dirties a different page (and, after each
 * checkpoint, logs that whole page to the WAL again); with v7 ids the new keys of a moment share
 * the newest pages. Measured on PostgreSQL alone (the README's Performance section): the
 * batched conversion + sale entry statement, 14 rows a call, on a database holding 2 million
 * conversions: 677 statements/s with random ids, 882 with these.
 */
export function newRowId(): string {
  const random = randomBytesForId();
  const now = Date.now();
  if (now > clock.msecs) {
    clock.msecs = now;
    clock.seq = ((random[6] & 0x7f) << 24) | (random[7] << 16) | (random[8] << 8) | random[9];
  } else {
    clock.seq = (clock.seq + 1) | 0;
    if (clock.seq === 0) clock.msecs++;
  }
  return v7({ random, msecs: clock.msecs, seq: clock.seq });
}

/**
 * The millisecond and counter of the last id made (newRowId). uuid's own v7() keeps the same
 * state, but takes its 16 random bytes with a getRandomValues call per id, a system call: on the
 * hot paths (two ids per conversion) that was about 7 % of the service's CPU per request. Given
 * its random bytes, v7() keeps no state, so the counter lives here, with the same rule: a new
 * millisecond starts it at 31 random bits, within one it counts up, and on overflow the time
 * moves on a millisecond.
 */
const clock = { msecs: -Infinity, seq: 0 };

/** Random bytes drawn 4 KiB at a time (one system call per 256 ids), handed out 16 per id. */
const randomPool = new Uint8Array(4096);
let randomPoolNext = randomPool.length;

function randomBytesForId(): Uint8Array {
  if (randomPoolNext === randomPool.length) {
    randomFillSync(randomPool);
    randomPoolNext = 0;
  }
  randomPoolNext += 16;
  return randomPool.subarray(randomPoolNext - 16, randomPoolNext);
}
