import { describe, expect, it } from 'vitest';
import { BadRequestError, ServiceUnavailableError } from '../../server/src/http/errors.js';
import { orRepeatOnRefusal } from '../../server/src/modules/idempotent-repeat.js';

/** The one rule for repeated requests (modules/idempotent-repeat.ts), used by customers and conversions. */
describe('a refused request whose key names a record', () => {
  const refused = () => Promise.reject(new BadRequestError('No attribution found'));

  it('answers the record, as a repeat', async () => {
    expect(await orRepeatOnRefusal(refused, async () => 'the customer')).toEqual({ repeat: 'the customer' });
  });

  it('keeps the refusal when there is no record (or none may be revealed)', async () => {
    await expect(orRepeatOnRefusal(refused, async () => undefined)).rejects.toThrow('No attribution found');
  });

  it('never turns a 5xx or an unexpected error into a repeat', async () => {
    const find = async () => 'the customer';
    await expect(orRepeatOnRefusal(() => Promise.reject(new ServiceUnavailableError('retry')), find)).rejects.toThrow(
      'retry',
    );
    await expect(orRepeatOnRefusal(() => Promise.reject(new Error('bug')), find)).rejects.toThrow('bug');
  });

  it('passes a success through without looking for a record', async () => {
    let looked = false;
    expect(
      await orRepeatOnRefusal(
        async () => 'created',
        async () => ((looked = true), 'x'),
      ),
    ).toEqual({ done: 'created' });
    expect(looked).toBe(false);
  });
});
