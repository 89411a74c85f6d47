/**
 * The personal fields a platform takes unhashed (types.ts ClearTraits), picked from the traits an integrator sent:
 * only the ones a connected adapter declares, trimmed, never a value that already is a hash.
 */
import type { ClearTraitName, ClearTraits } from '../delivery/types.ts'
import { isSha256Hex } from './hash.ts'
import type { IdentityTraits } from './hash.ts'

const FROM_TRAIT = {
  firstName: 'first_name', lastName: 'last_name', company: 'company', title: 'title', postalCode: 'postal_code',
} as const satisfies Partial<Record<ClearTraitName, keyof IdentityTraits>>
const FIELDS = Object.entries(FROM_TRAIT).map(([field, trait]) => ({ field, trait })) as { field: keyof typeof FROM_TRAIT, trait: keyof IdentityTraits }[]

/** The wanted clear fields of `traits`; undefined when none is there. The country is the conversion's own column. */
export function toClearTraits(traits: IdentityTraits | undefined, wanted: ReadonlySet<ClearTraitName>): ClearTraits | undefined {
  if (!traits) return undefined
  const clear: ClearTraits = {}
  for (const { field, trait } of FIELDS) {
    const value = traits[trait]?.trim()
    if (wanted.has(field) && value && !isSha256Hex(value)) clear[field] = value
  }
  return Object.keys(clear).length ? clear : undefined
}
