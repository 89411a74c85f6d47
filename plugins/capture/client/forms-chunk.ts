/**
 * Mapped forms as a chunk of its own (GET /script/forms?cop_key=), with the site's form settings: loaded only on a
 * site that maps forms, once identifiers are allowed (a form is never read before). It hands the main script the
 * cleaned identity of a submit, which is sent at once (the page is likely leaving).
 */
import { watchForms } from './forms.ts'
import { identity, type Identity } from './hits.ts'
import { readSettings, type FormsSettings } from './settings.ts'

;(window as any).__dcgate_forms = (permitted: () => boolean, send: (found: Identity) => void) =>
  watchForms(readSettings<FormsSettings>().forms, permitted, ({ email, fields }) => {
    const found = identity(email, fields)
    if (found) send(found)
  })
