import { useState } from 'react';
import type { User } from '@affiliate-attribution/contract';
import { useSession } from '../App';
import { api, data } from '../api';
import { CopyButton, Empty, Field, FormError, PageHeader, Status, date, useConfirm, useSubmit } from '../ui';
import { DataTable, usePagedList } from '../table';

function RoleSelect({ user, onChanged }: { user: User; onChanged: () => void }) {
  const [role, setRole] = useState(user.role);
  const change = useSubmit(
    async () => data(await api.people.updateUser({ params: { id: user.id }, body: { role } })),
    onChanged,
  );
  return (
    <>
      <label className="visually-hidden" htmlFor={`role-${user.id}`}>
        Role of {user.name}
      </label>
      <select id={`role-${user.id}`} value={role} onChange={(e) => setRole(e.target.value as User['role'])}>
        <option value="owner">owner</option>
        <option value="member">member</option>
      </select>{' '}
      {role !== user.role && (
        <button type="button" className="small" onClick={() => void change.submit()} disabled={change.busy}>
          Save
        </button>
      )}
      <FormError error={change.error} />
    </>
  );
}

export function Team() {
  const { session } = useSession();
  const confirm = useConfirm();
  const users = usePagedList(async (cursor) => {
    const page = data(await api.people.listUsers({ query: { cursor } }));
    return { items: page.users, next_cursor: page.next_cursor };
  }, []);
  const invitations = usePagedList(async (cursor) => {
    const page = data(await api.people.listInvitations({ query: { cursor } }));
    return { items: page.invitations, next_cursor: page.next_cursor };
  }, []);
  const [email, setEmail] = useState('');
  const [role, setRole] = useState<User['role']>('member');
  const [link, setLink] = useState<string>();
  const invite = useSubmit(
    async () => data(await api.people.createInvitation({ body: { email, role } })),
    (result) => {
      setLink(result.accept_url);
      setEmail('');
      invitations.reload();
    },
  );
  const act = useSubmit(async () => undefined);
  async function remove(user: User) {
    if (
      !(await confirm({
        title: `Remove ${user.name}?`,
        body: 'They are signed out everywhere at once and can no longer sign in.',
        confirm: 'Remove',
      }))
    )
      return;
    act.setError(undefined);
    try {
      data(await api.people.removeUser({ params: { id: user.id } }));
    } catch (err) {
      act.setError(err as never);
    }
    users.reload();
  }
  async function revoke(id: string, address: string) {
    if (
      !(await confirm({
        title: `Revoke the invitation of ${address}?`,
        body: 'Its link stops working.',
        confirm: 'Revoke',
      }))
    )
      return;
    try {
      data(await api.people.revokeInvitation({ params: { id } }));
    } catch (err) {
      act.setError(err as never);
    }
    invitations.reload();
  }
  return (
    <section>
      <PageHeader title="Team" />
      <form className="card form-grid" onSubmit={invite.submit} noValidate aria-label="Invite a teammate">
        <h2>Invite a teammate</h2>
        <Field
          label="E-mail"
          name="email"
          type="email"
          value={email}
          onChange={setEmail}
          error={invite.error}
          required
        />
        <Field
          label="Role"
          name="role"
          error={invite.error}
          hint="Members do everything but API keys, integrations and the team"
        >
          {(attrs) => (
            <select {...attrs} value={role} onChange={(e) => setRole(e.target.value as User['role'])}>
              <option value="member">member</option>
              <option value="owner">owner</option>
            </select>
          )}
        </Field>
        <FormError error={invite.error} fields={['email', 'role']} />
        <div className="actions span">
          <button type="submit" disabled={invite.busy}>
            Send invitation
          </button>
        </div>
        {link && (
          <p className="span" role="status">
            Invitation sent. Its link, valid 7 days, in case the e-mail does not arrive:{' '}
            <code className="break">{link}</code> <CopyButton text={link} />
          </p>
        )}
      </form>
      <h2>Users</h2>
      <FormError error={act.error} />
      <DataTable
        label="Users"
        list={users}
        rowKey={(u) => u.id}
        empty={<Empty title="No user yet" />}
        columns={[
          {
            header: 'Name',
            rowHeader: true,
            cell: (u) => (
              <>
                {u.name}
                {u.id === session.user.id && <small className="muted"> (you)</small>}
              </>
            ),
          },
          { header: 'E-mail', cell: (u) => u.email },
          { header: 'Role', cell: (u) => <RoleSelect user={u} onChanged={users.reload} /> },
          { header: 'Since', cell: (u) => date(u.created_at) },
          {
            header: 'Actions',
            hiddenHeader: true,
            // Nobody removes themselves here (sign out instead; another owner can remove them).
            cell: (u) =>
              u.id !== session.user.id && (
                <button
                  type="button"
                  className="danger small"
                  onClick={() => void remove(u)}
                  aria-label={`Remove ${u.name}`}
                >
                  Remove
                </button>
              ),
          },
        ]}
      />
      <h2>Invitations</h2>
      <DataTable
        label="Invitations"
        list={invitations}
        rowKey={(i) => i.id}
        empty={<p className="muted">No invitation yet: invite a teammate above.</p>}
        columns={[
          { header: 'E-mail', rowHeader: true, cell: (i) => i.email },
          { header: 'Role', cell: (i) => i.role },
          { header: 'Status', cell: (i) => <Status value={i.status} /> },
          // Only a pending invitation can still expire; the others are done, whatever their date said.
          { header: 'Expires', cell: (i) => (i.status === 'pending' ? date(i.expires_at) : '—') },
          {
            header: 'Actions',
            hiddenHeader: true,
            cell: (i) =>
              i.status === 'pending' && (
                <button
                  type="button"
                  className="danger small"
                  onClick={() => void revoke(i.id, i.email)}
                  aria-label={`Revoke the invitation of ${i.email}`}
                >
                  Revoke
                </button>
              ),
          },
        ]}
      />
    </section>
  );
}
