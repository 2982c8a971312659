import { useState } from 'react';
import type { Affiliate } from '@affiliate-attribution/contract';
import { api, data } from '../api';
import { FormError, useSubmit } from '../ui';

/** E-mails an affiliate a link into the partner portal (the link itself is only in their mailbox). */
export function InvitePartner({ affiliate }: { affiliate: Affiliate }) {
  const [sent, setSent] = useState<string>();
  const invite = useSubmit(
    async () => {
      const res = await api.partnerInvitations.invite({ params: { id: affiliate.id }, body: {} });
      if (res.status !== 202) data(res); // throws the service's message
      return (res.body as { data: { email: string } }).data;
    },
    (r) => setSent(r.email),
  );
  return (
    <span>
      <button type="button" className="secondary small" onClick={() => void invite.submit()} disabled={invite.busy}>
        Invite to the partner portal
      </button>{' '}
      {sent && <span role="status">Invitation e-mailed to {sent}</span>}
      <FormError error={invite.error} />
    </span>
  );
}
