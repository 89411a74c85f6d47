/**
 * The consent tools a shop runs, for the browser test's pages (bundled with esbuild by cmp.test.ts): the IAB's own
 * TCF CMP API (@iabtechlabtcf/cmpapi) and GPP CMP API (@iabgpp/cmpapi). The test drives them through `window.cmp`.
 */
import { CmpApi as GppCmpApi, SignalStatus } from '@iabgpp/cmpapi'
import { CmpApi as TcfCmpApi } from '@iabtechlabtcf/cmpapi'

const page = window as unknown as { cmp: Record<string, (...args: any[]) => void>, cmpKind?: string }
let addtlConsent: string | undefined
if (page.cmpKind === 'tcf') {
  const tcf = new TcfCmpApi(10, 1, true)
  // Google's Additional Consent extension of the CMP API: tcData carries `addtlConsent` beside the TC string.
  const w = window as any
  const real = w.__tcfapi
  w.__tcfapi = (command: string, version: number, callback: (data: any, ok: boolean) => void, parameter?: unknown) =>
    real(command, version, (data: any, ok: boolean) => callback(data && typeof data === 'object' && addtlConsent ? { ...data, addtlConsent } : data, ok), parameter)
  // The CMP shows its dialog: no answer yet.
  tcf.update('', true)
  page.cmp = { tcf: (tcString: string, ac?: string) => (addtlConsent = ac, tcf.update(tcString, false)) }
}
if (page.cmpKind === 'gpp-eu') {
  const gpp = new GppCmpApi(10, 1)
  page.cmp = {
    gpp: (purposes: number[]) => {
      gpp.setFieldValue('tcfeuv2', 'PurposeConsents', Array.from({ length: 24 }, (_, i) => purposes.includes(i + 1)))
      gpp.setFieldValue('tcfeuv2', 'VendorConsents', [755])
      gpp.setApplicableSections([2])
      gpp.setSignalStatus(SignalStatus.READY)
      gpp.fireSectionChange('tcfeuv2')
    },
  }
}
if (page.cmpKind === 'gpp') {
  const gpp = new GppCmpApi(10, 1)
  page.cmp = {
    gpp: (saleOptOut: number) => {
      gpp.setFieldValue('usnat', 'SaleOptOut', saleOptOut)
      gpp.setApplicableSections([7])
      gpp.setSignalStatus(SignalStatus.READY)
      gpp.fireSectionChange('usnat')
    },
  }
}
