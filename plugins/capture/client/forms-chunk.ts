/**
 * Mapped forms as a chunk of its own (GET /script/forms?cop_key=), with the site's form settings: loaded only on a
 * site that maps forms, once identifiers are allowed (a form is never read before).
 */
import { watchForms } from './forms.ts'
import { readSettings, type FormsSettings } from './settings.ts'

;(window as any).__dcgate_forms = (permitted: () => boolean, identify: Parameters<typeof watchForms>[2]) =>
  watchForms(readSettings<FormsSettings>().forms, permitted, identify)
