import { z } from 'zod';

/** How a program takes partners through its public join page (spec/ledger.md, "People"). */
export const ProgramSignup = z
  .enum(['open', 'approval', 'closed'])
  .describe(
    "How partners join through the program's public page (`/portal/{organizationId}/join/{programId}`): `open`, they are `active` at once; `approval`, they are `pending` until the merchant approves them (`PATCH /api/affiliates/{id}` with `status: active`); `closed`, the page answers that the program takes no applications. Invitations and `POST /api/affiliates` work whatever it says.",
  );

/** The program fields the partner portal reads: spread into the program's own fields (programs.ts). */
export const programJoiningFields = {
  signup: ProgramSignup,
  terms: z
    .string()
    .trim()
    .min(1)
    .max(20_000)
    .nullable()
    .describe(
      'The program terms a partner accepts when joining (plain text, shown on the join page); null: none to accept.',
    ),
  website_url: z
    .string()
    .url()
    .max(2_000)
    .refine((v) => /^https?:\/\//i.test(v), 'Expected an http(s) URL')
    .nullable()
    .describe(
      "The merchant's site, where referral links point (`<website_url>?ref=<slug>`); partners build links to any page of this host (and its subdomains) in the portal. null: partners see only their slug.",
    ),
};

export type ProgramSignup = z.infer<typeof ProgramSignup>;
