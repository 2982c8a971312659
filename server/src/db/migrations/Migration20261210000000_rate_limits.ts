import { Migration } from '@mikro-orm/migrations';

/**
 * Rate-limit counters shared by every instance when there is no Redis (http/rate-limit-stores.ts):
 * rate-limiter-flexible's RateLimiterPostgres layout (a key, the points counted in its window, the
 * window's end in epoch milliseconds), created here so that the service never runs DDL at start.
 * Not tenant data (keys are API-key hashes and client addresses, each row lives one window), so
 * no organization_id; the library deletes rows an hour past their window.
 */
export class Migration20261210000000_rate_limits extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
create table rate_limits (
  key varchar(255) primary key,
  points integer not null default 0,
  expire bigint
);
`);
  }
}
