import { useState } from 'react';
import type { User } from '@affiliate-attribution/contract';
import { useSession } from '../App';
import { api, data } from '../api';
import { CopyButton, Field, FormError, Loading, PageHeader, Pager, Status, TableWrap, date, useConfirm, useLoad, usePages, useSubmit } from '../ui';

function RoleSelect({ user, onChanged }: { user: User; onChanged: () => void }) {
  const [role, setRole] = useState(user.role);
  const change = useSubmit(async () => data(await api.people.updateUser({ params: { id: user.id }, body: { role } })), onChanged);
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
  const userPages = usePages();
  const invitationPages = usePages();
  const users = useLoad(async () => data(await api.people.listUsers({ query: { cursor: userPages.cursor } })), [userPages.cursor]);
  const invitations = useLoad(async () => data(await api.people.listInvitations({ query: { cursor: invitationPages.cursor } })), [invitationPages.cursor]);
  const [email, setEmail] = useState('');
  const [role, setRole] = useState<User['role']>('member');
  const [link, setLink] = useState<string>();
  const invite = useSubmit(async () => data(await api.people.createInvitation({ body: { email, role } })), (result) => {
    setLink(result.accept_url);
    setEmail('');
    invitations.reload();
  });
  const act = useSubmit(async () => undefined);
  async function remove(user: User) {
    if (!(await confirm({ title: `Remove ${user.name}?`, body: 'They are signed out everywhere at once and can no longer sign in.', confirm: 'Remove' }))) return;
    act.setError(undefined);
    try {
      data(await api.people.removeUser({ params: { id: user.id } }));
    } catch (err) {
      act.setError(err as never);
    }
    users.reload();
  }
  async function revoke(id: string, address: string) {
    if (!(await confirm({ title: `Revoke the invitation of ${address}?`, body: 'Its link stops working.', confirm: 'Revoke' }))) return;
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
        <Field label="E-mail" name="email" type="email" value={email} onChange={setEmail} error={invite.error} required />
        <Field label="Role" name="role" error={invite.error} hint="Members do everything but API keys, integrations and the team">
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
            Invitation sent. Its link, valid 7 days, in case the e-mail does not arrive: <code className="break">{link}</code> <CopyButton text={link} />
          </p>
        )}
      </form>
      <h2>Users</h2>
      <FormError error={users.error ?? act.error} />
      {users.loading && !users.data ? (
        <Loading />
      ) : (
        <>
          <TableWrap label="Users">
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">E-mail</th>
                <th scope="col">Role</th>
                <th scope="col">Since</th>
                <th scope="col">
                  <span className="visually-hidden">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {users.data?.users.map((u) => (
                <tr key={u.id}>
                  <th scope="row">
                    {u.name}
                    {u.id === session.user.id && <small className="muted"> (you)</small>}
                  </th>
                  <td>{u.email}</td>
                  <td>
                    <RoleSelect user={u} onChanged={users.reload} />
                  </td>
                  <td>{date(u.created_at)}</td>
                  <td>
                    <button type="button" className="danger small" onClick={() => void remove(u)} aria-label={`Remove ${u.name}`}>
                      Remove
                    </button>
                  </td>
                </tr>
              ))}
            </tbody>
          </TableWrap>
          <Pager pages={userPages} nextCursor={users.data?.next_cursor} />
        </>
      )}
      <h2>Invitations</h2>
      {invitations.data?.invitations.length === 0 ? (
        <p className="muted">No invitation yet: invite a teammate above.</p>
      ) : (
        <>
          <TableWrap label="Invitations">
            <thead>
              <tr>
                <th scope="col">E-mail</th>
                <th scope="col">Role</th>
                <th scope="col">Status</th>
                <th scope="col">Expires</th>
                <th scope="col">
                  <span className="visually-hidden">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {invitations.data?.invitations.map((i) => (
                <tr key={i.id}>
                  <th scope="row">{i.email}</th>
                  <td>{i.role}</td>
                  <td>
                    <Status value={i.status} />
                  </td>
                  <td>{date(i.expires_at)}</td>
                  <td>
                    {i.status === 'pending' && (
                      <button type="button" className="danger small" onClick={() => void revoke(i.id, i.email)} aria-label={`Revoke the invitation of ${i.email}`}>
                        Revoke
                      </button>
                    )}
                  </td>
                </tr>
              ))}
            </tbody>
          </TableWrap>
          <Pager pages={invitationPages} nextCursor={invitations.data?.next_cursor} />
        </>
      )}
    </section>
  );
}
