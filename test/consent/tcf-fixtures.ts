/** TC strings made with the IAB's own encoder (@iabtechlabtcf/core) over a small vendor list, for tests. */
import { GVL, TCModel, TCString } from '@iabtechlabtcf/core'

const purposes = Object.fromEntries(Array.from({ length: 11 }, (_, i) => [i + 1, { id: i + 1, name: `Purpose ${i + 1}`, description: '', illustrations: [] }]))
const vendor = (id: number, name: string) => ({ id, name, purposes: [1, 3, 4, 7], legIntPurposes: [], flexiblePurposes: [], specialPurposes: [], features: [], specialFeatures: [], policyUrl: 'https://vendor.example/privacy' })

/** A vendor list with the GVL ids dcgate maps (Google 755, LinkedIn 804, Microsoft Advertising 1126) and one other vendor. */
export function testVendorList(): GVL {
  return new GVL({
    gvlSpecificationVersion: 3, vendorListVersion: 100, tcfPolicyVersion: 5, lastUpdated: '2026-11-01T00:00:00Z',
    purposes, specialPurposes: {}, features: {}, specialFeatures: {}, stacks: {}, dataCategories: {},
    vendors: {
      755: vendor(755, 'Google Advertising Products'), 804: vendor(804, 'LinkedIn Ireland Unlimited Company'), 1000: vendor(1000, 'Other vendor'),
      1126: vendor(1126, 'Microsoft Advertising'),
    },
  } as never)
}

/** A TC string granting these purposes to these vendors. */
export function tcString(purposeIds: number[], vendorIds: number[]): string {
  const model = new TCModel(testVendorList())
  model.cmpId = 10
  model.cmpVersion = 1
  model.isServiceSpecific = true
  model.purposeConsents.set(purposeIds)
  model.vendorConsents.set(vendorIds)
  return TCString.encode(model)
}
