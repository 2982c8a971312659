/**
 * The tracking snippet, run in the merchant's pages (compiled by ../build.ts to a minified ES2017
 * IIFE and served at /snippet.js). No dependencies, no globals besides `window.svc`, and nothing
 * it does may throw into the page: every command answers a promise (and an optional callback)
 * that always resolves with a {@link SvcResult}.
 *
 *   <script async src="{base_url}/snippet.js" data-organization="<organization id>"></script>
 *
 * Attributes: `data-organization` (required), `data-param` (one more referral query parameter,
 * looked for first; the organization's own list, GET /api/link-params, needs no attribute: see
 * linkParams below), `data-cookie-domain` (share the cookie across subdomains, e.g. `.example.com`),
 * `data-endpoint` (where its calls go, e.g. `/_aff`: a first-party path of the merchant's own
 * site that forwards them to the service, the SDK's createFirstPartyProxy; default: beside the
 * script), `data-mode` (`test`: clicks and signups go to the organization's test data, seen only
 * with test keys; default live. Any other value is sent as it is, and the service refuses it, so a
 * mistyped mode never records live data). A call to the page's own origin goes with the browser's credentials, so that the
 * `Set-Cookie` of the answer stores `svc_aff` as a cookie of the merchant's domain, which
 * browsers keep for its whole lifetime (script-written cookies are capped at 7 days in Safari).
 */

/** What every command resolves with (and passes to its callback). */
interface SvcResult {
  ok: boolean;
  /** detect: the value now in the `svc_aff` cookie. */
  cookieId?: string;
  /** detect: true when the service was slow or failing and the raw slug was stored instead. */
  fallback?: boolean;
  /** trial/customer: true when the customer already existed. */
  deduped?: boolean;
  /** Why nothing (more) happened: `no_ref`, `no_cookie`, `bot`, or the service's message. */
  error?: string;
}

type Callback = (result: SvcResult) => void;

/** A queued call: the `arguments` of a call made before load, with the stub's resolver if any. */
interface QueuedCall extends ArrayLike<unknown> {
  r?: (result: SvcResult) => void;
}

interface Svc {
  (command: string, ...args: unknown[]): Promise<SvcResult>;
  loaded?: boolean;
  q?: QueuedCall[];
}

/** What the snippet reads of the service's answers (an error's message, a click, `deduped`). */
interface ReplyBody {
  message?: string;
  deduped?: boolean;
  data: { click?: { cookie_id: string; cookie_max_age_seconds: number }; link_params?: unknown };
}

interface Reply {
  status: number;
  body: ReplyBody;
}

const COOKIE = 'svc_aff';
/** How long a click registration may take before the raw slug is stored instead. */
const CLICK_TIMEOUT_MS = 1500;
/** When a customer call takes this long its promise resolves (the request itself goes on). */
const CUSTOMER_TIMEOUT_MS = 10000;
/** Lifetime of a fallback (raw slug) cookie: the programs' default click window, 60 days. */
const FALLBACK_MAX_AGE = 60 * 86400;
const SLUG = /^[a-z0-9-]{2,64}$/;

const w = window as unknown as { svc?: Svc };

function warn(message: string): void {
  try {
    console.warn('[svc] ' + message);
  } catch (e) {
    // no console: nothing to say it on
  }
}

(function () {
  const existing = w.svc;
  if (existing && existing.loaded) return;
  try {
    install(existing);
  } catch (e) {
    warn('not started: ' + String(e));
  }
})();

/** Defines the real `svc`, detects the referral, then replays the calls queued before load. */
function install(existing: Svc | undefined): void {
  const script = (document.currentScript ||
    document.querySelector('script[data-organization][src*="snippet.js"]')) as HTMLScriptElement | null;
  const data = (name: string): string => (script && script.getAttribute('data-' + name)) || '';
  const organization = data('organization');
  const explicitParam = data('param');
  const cookieDomain = data('cookie-domain');
  const mode = data('mode');
  /** The body with the tag's mode, when it names one (else the service's default: live). */
  // Object.assign, not a spread: ES2017 has no object spread, and esbuild's helper for it costs ~300 bytes.
  const withMode = <T extends object>(body: T): T => (mode ? Object.assign({}, body, { mode }) : body);
  // Endpoints live beside the snippet, so a service under a path prefix works unchanged, unless
  // data-endpoint names a base of their own (a first-party path: see the attributes above).
  const endpointBase = data('endpoint');
  const base = (): URL =>
    endpointBase
      ? new URL(endpointBase.replace(/\/*$/, '/'), location.href)
      : new URL(script ? script.src : location.href);
  const endpoint = (name: string): string =>
    new URL('public/organizations/' + encodeURIComponent(organization) + '/' + name, base()).href;

  let detected: Promise<SvcResult> | undefined;
  let detectedSearch: string | undefined;
  let linkParams: Promise<string[]> | undefined;

  function readCookie(): string {
    const match = document.cookie.match(/(?:^|;\s*)svc_aff=([^;]*)/);
    try {
      return match ? decodeURIComponent(match[1]) : '';
    } catch (e) {
      return '';
    }
  }

  function writeCookie(value: string, maxAge: number): void {
    document.cookie =
      COOKIE +
      '=' +
      encodeURIComponent(value) +
      '; path=/' +
      (maxAge > 0 ? '; max-age=' + maxAge : '') +
      (cookieDomain ? '; domain=' + cookieDomain : '') +
      '; SameSite=Lax' +
      (location.protocol === 'https:' ? '; Secure' : '');
  }

  /**
   * POSTs JSON as text/plain (a CORS "simple" request: no preflight round trip), or GETs when there
   * is no body. Resolves with the reply, or null on a network failure or after `timeoutMs`; `abort`
   * cancels the request then.
   */
  function post(name: string, body: object | undefined, timeoutMs: number, abort: boolean): Promise<Reply | null> {
    return new Promise((resolve) => {
      const controller = abort && typeof AbortController === 'function' ? new AbortController() : undefined;
      const timer = setTimeout(() => {
        resolve(null);
        if (controller) controller.abort();
      }, timeoutMs);
      const done = (reply: Reply | null): void => {
        clearTimeout(timer);
        resolve(reply);
      };
      fetch(endpoint(name), {
        method: body ? 'POST' : 'GET',
        body: body ? JSON.stringify(body) : undefined,
        // The service itself needs no cookie; a first-party path sets svc_aff in its answer.
        credentials: base().origin === location.origin ? 'same-origin' : 'omit',
        keepalive: !!body,
        signal: controller && controller.signal,
      }).then(
        (res) =>
          res.json().then(
            (json: ReplyBody) => done({ status: res.status, body: json }),
            // Not JSON: no message, no data (reading a click from it fails, as it would have).
            () => done({ status: res.status, body: {} as ReplyBody }),
          ),
        () => done(null),
      );
    });
  }

  const failure = (reply: Reply): string => (reply.body && reply.body.message) || 'HTTP ' + reply.status;

  function detect(): Promise<SvcResult> {
    const search = location.search;
    if (detected && detectedSearch === search) return detected;
    detectedSearch = search;
    // No query string, no referral: nothing to ask the service.
    if (search.length < 2) return (detected = Promise.resolve({ ok: false, error: 'no_ref' }));
    if (!organization) {
      warn('the snippet tag has no data-organization attribute');
      return (detected = Promise.resolve({ ok: false, error: 'no_organization' }));
    }
    // The organization's link parameters (`ref`, Rewardful's `via`, ...), read once per page (a GET
    // cacheable for five minutes: most landings read the browser's copy); `ref` when unreadable in
    // time. `data-param`, when the tag names one, is looked for first.
    linkParams =
      linkParams ||
      post('link-params', undefined, CLICK_TIMEOUT_MS, true).then((reply) => {
        const list = reply && reply.status === 200 && reply.body.data.link_params;
        return [explicitParam].concat(Array.isArray(list) ? list : 'ref');
      });
    return (detected = linkParams.then((names) => {
      const query = new URLSearchParams(search);
      for (const name of names) {
        let ref = query.get(name);
        if (name && ref) {
          // PartnerStack's gspk carries the partner key Base64-encoded.
          if (name === 'gspk')
            try {
              ref = atob(ref);
            } catch (e) {
              // not Base64: looked up as it is (refused as malformed when it is no slug)
            }
          return track(name, ref.trim().toLowerCase());
        }
      }
      return { ok: false, error: 'no_ref' };
    }));
  }

  function track(param: string, ref: string): Promise<SvcResult> {
    if (!SLUG.test(ref)) {
      warn('ignoring malformed ' + param + ' "' + ref + '"');
      return Promise.resolve({ ok: false, error: 'No attribution found' });
    }
    const landingUrl = location.href.slice(0, 2048);
    // The current cookie goes with the click: under the program's first_click model the service
    // answers `kept` when it still attributes, and the cookie stays as it is (lifetime included).
    const current = readCookie();
    const click = { ref, landingUrl, referrer: document.referrer.slice(0, 2048), cookieId: current || undefined };
    return post('clicks', withMode(click), CLICK_TIMEOUT_MS, true).then((reply): SvcResult => {
      if (reply && reply.status === 201 && reply.body.data.click) {
        const click = reply.body.data.click;
        // Already there: kept (first_click, a click flood), or set by a first-party path's Set-Cookie.
        if (readCookie() !== click.cookie_id) writeCookie(click.cookie_id, click.cookie_max_age_seconds);
        return { ok: true, cookieId: click.cookie_id };
      }
      if (reply && reply.status === 200) return { ok: false, error: 'bot' };
      if (reply && reply.status < 429) {
        // The service answered: the referral is unknown or malformed. Keep any earlier cookie.
        warn(param + ' "' + ref + '" not tracked: ' + failure(reply));
        return { ok: false, error: failure(reply) };
      }
      // Slow, unreachable or failing service: the slug itself attributes (no click window).
      writeCookie(ref, FALLBACK_MAX_AGE);
      return { ok: true, cookieId: ref, fallback: true };
    });
  }

  function trackCustomer(customerId: unknown): Promise<SvcResult> {
    // Wait for a click registration still in flight on this page, so its cookie is the one read.
    return (detected || Promise.resolve()).then(() => {
      if (typeof customerId === 'number') customerId = String(customerId);
      if (typeof customerId !== 'string' || !customerId) {
        warn("svc('trial', customerId) needs the customer id");
        return { ok: false, error: 'no_customer_id' };
      }
      const cookieId = readCookie();
      if (!cookieId) {
        warn('no svc_aff cookie (no referral on this browser): customer ' + customerId + ' not tracked');
        return { ok: false, error: 'no_cookie' };
      }
      if (!organization) {
        warn('the snippet tag has no data-organization attribute');
        return { ok: false, error: 'no_organization' };
      }
      return post('customers', withMode({ customerId, cookieId }), CUSTOMER_TIMEOUT_MS, false).then(
        (reply): SvcResult => {
          if (reply && reply.status < 300) return { ok: true, deduped: reply.body.deduped };
          const error = reply ? failure(reply) : 'network error or timeout';
          warn('customer ' + String(customerId) + ' not tracked: ' + error);
          return { ok: false, error };
        },
      );
    });
  }

  const svc: Svc = function (command: string, ...args: unknown[]): Promise<SvcResult> {
    const callback = typeof args[args.length - 1] === 'function' ? (args.pop() as Callback) : undefined;
    let result: Promise<SvcResult>;
    try {
      result =
        command === 'detect'
          ? detect()
          : command === 'trial' || command === 'customer'
            ? trackCustomer(args[0])
            : Promise.resolve({ ok: false, error: 'unknown command ' + command });
    } catch (e) {
      result = Promise.resolve({ ok: false, error: String(e) });
    }
    return result
      .then(undefined, (e: unknown): SvcResult => ({ ok: false, error: String(e) }))
      .then((r) => {
        if (r.error && r.error.indexOf('unknown command') === 0) warn(r.error);
        try {
          if (callback) callback(r);
        } catch (e) {
          warn('callback failed: ' + String(e));
        }
        return r;
      });
  };
  svc.loaded = true;
  w.svc = svc;

  // svc's promise always resolves (with a SvcResult): nothing to catch.
  void svc('detect');
  const queue = (existing && existing.q) || [];
  for (let i = 0; i < queue.length; i++) {
    const call = queue[i];
    const done = call.r;
    const replay = svc(...(Array.prototype.slice.call(call) as [string, ...unknown[]]));
    if (typeof done === 'function') void replay.then(done);
  }
}
