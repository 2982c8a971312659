import type { PipelineRequest } from '../../http/pipeline.js';
import { contract } from '@affiliate-attribution/contract';
import { s } from '../../http/router-types.js';
import type { ClicksService } from '../clicks/clicks.service.js';
import type { CustomersService } from '../customers/customers.service.js';
import type { OrganizationsService } from '../organizations/organizations.service.js';
import type { LinkParamsService } from '../organizations/link-params.js';
import { isBotUserAgent } from './bots.js';
import { visitorAddressOf } from './forwarded-visitor.js';

const USER_AGENT_MAX = 1024;

/**
 * The snippet's public endpoints. They go through the same services as the merchant API, so a
 * click or a customer tracked by the snippet is exactly what POST /api/clicks or POST
 * /api/customers would have created; only the answers are narrowed to what the snippet needs.
 */
export const trackingRouter = (
  clicks: ClicksService,
  customers: CustomersService,
  organizations: OrganizationsService,
  linkParams: LinkParamsService,
) => {
  /**
   * `"mode": "test"` (the snippet's data-mode="test"): the organization in the path is the account,
   * and the click or customer goes to its test organization; the answers say which (livemode).
   */
  const organizationOf = async (
    req: { livemode?: boolean },
    accountId: string,
    mode: 'live' | 'test' | undefined,
  ): Promise<string> => {
    req.livemode = mode !== 'test';
    return mode === 'test' ? organizations.testDataOf(accountId) : accountId;
  };
  return s.router(contract.tracking, {
    linkParams: async ({ params, res }) => {
      const link_params = await linkParams.ofAccount(params.organizationId);
      // Read by the snippet on landing pages with a query string: browsers and CDNs keep it 5 minutes.
      res.setHeader('Cache-Control', 'public, max-age=300');
      return { status: 200, body: { success: true, data: { link_params } } };
    },
    createClick: async ({ req, params, body }) => {
      const userAgent = req.headers['user-agent'];
      if (isBotUserAgent(userAgent)) {
        return { status: 200, body: { success: true, data: { click: null } } };
      }
      const { click, recorded } = await clicks.create(await organizationOf(req, params.organizationId, body.mode), {
        ref: body.ref,
        landing_url: body.landingUrl,
        referrer: body.referrer,
        user_agent: userAgent?.slice(0, USER_AGENT_MAX),
        ip: visitorAddressOf(req),
        cookie_id: body.cookieId,
      });
      (req as PipelineRequest).clickRecorded = recorded;
      return {
        status: 201,
        body: {
          success: true,
          data: {
            click: {
              cookie_id: click.cookie_id,
              cookie_max_age_seconds: click.cookie_max_age_seconds,
              kept: click.kept_earlier_click,
            },
          },
        },
      };
    },
    createCustomer: async ({ req, params, body }) => {
      const { customer, deduped } = await customers.create(
        await organizationOf(req, params.organizationId, body.mode),
        { customer_id: body.customerId, cookie_id: body.cookieId, status: 'trial' },
        'refuse',
      );
      return {
        status: deduped ? 200 : 201,
        body: { success: true, data: { customer: { customer_id: customer.customer_id } }, deduped },
      };
    },
  });
};
