/** What a site's plan (`sites[].plan`) allows, where more than one plugin shows or enforces it. */

/** Email checks every site gets for free, for life (spec "Limits"): enforced by email-risk, shown by the dashboard. */
export const FREE_EMAIL_CHECKS = 500
