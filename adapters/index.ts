import type { AnyDefinition } from '../core/registry.ts'
import meta from './ads/meta/index.ts'
import googleAds from './ads/google-ads/index.ts'
import tiktok from './ads/tiktok/index.ts'
import linkedin from './ads/linkedin/index.ts'
import microsoftAds from './ads/microsoft-ads/index.ts'
import reddit from './ads/reddit/index.ts'
import pinterest from './ads/pinterest/index.ts'
import x from './ads/x/index.ts'
import ga4 from './ads/ga4/index.ts'
import snapchat from './ads/snapchat/index.ts'
import shopify from './sources/shopify/index.ts'
import woocommerce from './sources/woocommerce/index.ts'
import stripe from './sources/stripe/index.ts'
import automationTools from './sources/automation/index.ts'
import hubspot from './crm/hubspot/index.ts'
import pipedrive from './crm/pipedrive/index.ts'
import salesforce from './crm/salesforce/index.ts'

/**
 * Every adapter dcgate ships, registered explicitly (no code generation). A meta-test fails when a
 * definition exported by a folder under adapters/ads, adapters/crm or adapters/sources is missing here.
 */
export const adapters: readonly AnyDefinition[] = [
  meta, googleAds, tiktok, linkedin, microsoftAds, reddit, pinterest, x, ga4, snapchat,
  shopify, woocommerce, stripe, ...automationTools,
  hubspot, pipedrive, salesforce,
]
