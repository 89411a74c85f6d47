/**
 * The consent tools a shop runs, for the browser test's pages (bundled with esbuild by cmp.test.ts): the IAB's own
 * TCF CMP API (@iabtechlabtcf/cmpapi) and GPP CMP API (@iabgpp/cmpapi). The test drives them through `window.cmp`.
 */
import { CmpApi as GppCmpApi, SignalStatus } from '@iabgpp/cmpapi'
import { CmpApi as TcfCmpApi } from '@iabtechlabtcf/cmpapi'

const page = window as unknown as { cmp: Record<string, (...args: any[]) => void>, cmpKind?: string }
if (page.cmpKind === 'tcf') {
  const tcf = new TcfCmpApi(10, 1, true)
  // The CMP shows its dialog: no answer yet.
  tcf.update('', true)
  page.cmp = { tcf: (tcString: string) => tcf.update(tcString, false) }
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
