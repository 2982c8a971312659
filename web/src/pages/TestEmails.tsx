import type { ReactNode } from 'react';
import type { TestEmail } from '@affiliate-attribution/contract';
import { api, data } from '../api';
import { Empty, PageHeader, dateTime } from '../ui';
import { DataTable, usePagedList, type Column } from '../table';

/** The message's text with its links made followable (a sign-in link is how the merchant tries the partner's side). */
function Linked({ text }: { text: string }) {
  const parts: ReactNode[] = [];
  let last = 0;
  for (const match of text.matchAll(/https?:\/\/[^\s]+/g)) {
    const at = match.index ?? 0;
    parts.push(text.slice(last, at));
    parts.push(
      <a key={at} href={match[0]} target="_blank" rel="noreferrer">
        {match[0]}
      </a>,
    );
    last = at + match[0].length;
  }
  parts.push(text.slice(last));
  return <pre className="mail-text">{parts}</pre>;
}

const columns: Column<TestEmail>[] = [
  { header: 'To', rowHeader: true, cell: (m) => <span className="break">{m.to}</span> },
  { header: 'Subject', cell: (m) => m.subject },
  { header: 'When', cell: (m) => dateTime(m.created_at) },
  { header: 'Message', cell: (m) => <Linked text={m.text} /> },
];

/**
 * Test e-mails (GET /api/test-emails): in test mode the service e-mails no partner or customer;
 * what it would have sent is kept and shown here, links included. Test mode only: the API answers
 * 403 in live mode, and the page says so rather than show an empty list.
 */
export function TestEmails() {
  const list = usePagedList(async (cursor) => {
    const page = data(await api.testEmails.list({ query: { cursor, limit: 25 } }));
    return { items: page.test_emails, next_cursor: page.next_cursor };
  }, []);
  return (
    <section>
      <PageHeader title="Test e-mails" />
      <p className="muted">
        In test mode no e-mail goes to a partner or a customer. What would have been sent (portal invitations, sign-in
        links, answers to applications) is kept here instead: open a link to try the partner&apos;s side.
      </p>
      <DataTable
        label="Test e-mails"
        list={list}
        rowKey={(m) => m.id}
        columns={columns}
        empty={
          <Empty title="No test e-mail yet">
            <p>
              Invite a test affiliate to the portal, or apply through a test program&apos;s join page: the e-mail
              appears here.
            </p>
          </Empty>
        }
      />
    </section>
  );
}
