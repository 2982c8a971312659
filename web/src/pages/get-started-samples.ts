/**
 * The code of the getting-started checklist (GetStarted.tsx), in the merchant's own ids: the
 * service's address, their organization id, an affiliate slug of theirs; the API key stays a
 * placeholder (an environment variable), as it never belongs in a page. The checklist runs in test
 * mode: the key is a test key (`svc_test_…`) and the snippet tag carries `data-mode="test"`; its
 * last step, "Go live", swaps both.
 */
export interface SampleIds {
  origin: string;
  organizationId: string;
  slug: string;
}

export type Sample = { label: string; code: string };

export function captureSamples({ origin, organizationId }: SampleIds): Sample[] {
  return [
    {
      label: 'Express',
      code: `import express from 'express';
import { createReferralMiddleware } from '@affiliate-attribution/sdk/server';

const app = express();
// AFFILIATE_API_KEY: your test key (svc_test_…) until you go live.
// Before your routes: a visit with ?ref=… records the click and sets the svc_aff cookie from your own domain.
app.use(createReferralMiddleware({ apiKey: process.env.AFFILIATE_API_KEY, baseUrl: '${origin}' }));`,
    },
    {
      label: 'Next.js middleware',
      code: `// middleware.ts
import { NextResponse, type NextRequest } from 'next/server';
import { referralCookie } from '@affiliate-attribution/sdk/server';

export async function middleware(request: NextRequest) {
  const response = NextResponse.next();
  const cookie = await referralCookie(request, {
    apiKey: process.env.AFFILIATE_API_KEY!,
    baseUrl: '${origin}',
  });
  if (cookie) response.headers.append('set-cookie', cookie);
  return response;
}`,
    },
    {
      label: 'Snippet tag',
      code: `<!-- In the <head> of your landing and signup pages -->
<script>
  window.svc = window.svc || function () { var a = arguments; return new Promise(function (r) { a.r = r; (svc.q = svc.q || []).push(a); }); };
</script>
<!-- data-mode="test": clicks and signups are test data. Remove it when you go live. -->
<script async src="${origin}/snippet.js" data-organization="${organizationId}" data-mode="test"></script>`,
    },
  ];
}

export function signupSamples({ origin, slug }: SampleIds): Sample[] {
  return [
    {
      label: 'curl',
      code: `export AFFILIATE_API_KEY=svc_test_your-key   # a test key from the Developers page (in test mode)
# A test signup, attributed to ${slug} by the slug (your code sends the visitor's svc_aff cookie as cookie_id)
curl -X POST ${origin}/api/customers \\
  -H "Authorization: Bearer $AFFILIATE_API_KEY" -H "Content-Type: application/json" \\
  -d '{"customer_id": "cus_test_1", "ref": "${slug}", "email": "buyer@example.com"}'`,
    },
    {
      label: 'Node.js SDK',
      code: `import { Client, getCookieId } from '@affiliate-attribution/sdk';

// AFFILIATE_API_KEY: your test key (svc_test_…) until you go live.
const client = new Client({ apiKey: process.env.AFFILIATE_API_KEY, baseUrl: '${origin}' });

// In the request that creates the account: your customer id, and the visitor's referral cookie.
await client.customers.create({ customer_id: user.id, cookie_id: getCookieId(req), email: user.email });`,
    },
    {
      label: 'Python',
      code: `import os, requests

requests.post(
    "${origin}/api/customers",
    headers={"Authorization": f"Bearer {os.environ['AFFILIATE_API_KEY']}"},
    json={"customer_id": user.id, "cookie_id": request.cookies.get("svc_aff"), "email": user.email},
    timeout=5,
)`,
    },
    {
      label: 'PHP',
      code: `$ch = curl_init("${origin}/api/customers");
curl_setopt_array($ch, [
    CURLOPT_POST => true, CURLOPT_RETURNTRANSFER => true, CURLOPT_TIMEOUT => 5,
    CURLOPT_HTTPHEADER => [
        "Authorization: Bearer " . getenv("AFFILIATE_API_KEY"),
        "Content-Type: application/json",
    ],
    CURLOPT_POSTFIELDS => json_encode([
        "customer_id" => $user->id,
        "cookie_id" => $_COOKIE["svc_aff"] ?? null,
        "email" => $user->email,
    ]),
]);
curl_exec($ch);`,
    },
  ];
}

export function paymentSamples({ origin }: SampleIds): Sample[] {
  return [
    {
      label: 'curl',
      code: `# The first charge of cus_test_1: its order id, the amount, and kind "initial"
curl -X POST ${origin}/api/conversions \\
  -H "Authorization: Bearer $AFFILIATE_API_KEY" -H "Content-Type: application/json" \\
  -d '{"external_id": "order_1001", "amount": 49.99, "customer_id": "cus_test_1", "kind": "initial"}'`,
    },
    {
      label: 'Node.js SDK',
      code: `// When a payment succeeds (your payment provider's webhook, say):
await client.conversions.create({ external_id: invoice.id, amount: 49.99, customer_id: user.id, kind: 'initial' });
// Renewals: the same call without kind (or kind: 'recurring').`,
    },
    {
      label: 'Python',
      code: `requests.post(
    "${origin}/api/conversions",
    headers={"Authorization": f"Bearer {os.environ['AFFILIATE_API_KEY']}"},
    json={"external_id": invoice.id, "amount": 49.99, "customer_id": user.id, "kind": "initial"},
    timeout=5,
)`,
    },
    {
      label: 'PHP',
      code: `$ch = curl_init("${origin}/api/conversions");
curl_setopt_array($ch, [
    CURLOPT_POST => true, CURLOPT_RETURNTRANSFER => true, CURLOPT_TIMEOUT => 5,
    CURLOPT_HTTPHEADER => [
        "Authorization: Bearer " . getenv("AFFILIATE_API_KEY"),
        "Content-Type: application/json",
    ],
    CURLOPT_POSTFIELDS => json_encode([
        "external_id" => $invoice->id,
        "amount" => 49.99,
        "customer_id" => $user->id,
        "kind" => "initial",
    ]),
]);
curl_exec($ch);`,
    },
  ];
}
