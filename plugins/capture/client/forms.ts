/** Mapped forms (site setting capture.forms): a submit identifies the visitor. Read only after consent. */
import type { FormsSettings } from './settings.ts'

export interface FormIdentity { email: unknown, fields: Record<string, unknown> }

function field(form: HTMLFormElement, name: string | undefined): string | undefined {
  const element = name ? (form.elements.namedItem(name) as { value?: unknown } | null) : null
  return element && typeof element.value === 'string' ? element.value : undefined
}

/** Listens to every submit (capture phase, so a page's stopPropagation does not hide it). */
export function watchForms(forms: FormsSettings['forms'], permitted: () => boolean, identify: (found: FormIdentity) => void): void {
  if (!forms.length) return
  document.addEventListener('submit', (event) => {
    try {
      const form = event.target as HTMLFormElement
      if (!permitted() || !form.matches) return
      for (const map of forms) {
        let matches = false
        try {
          matches = form.matches(map.selector)
        } catch {}
        if (!matches) continue
        identify({
          email: field(form, map.emailField),
          fields: { phone: field(form, map.phoneField), first_name: field(form, map.firstNameField), last_name: field(form, map.lastNameField) },
        })
        return
      }
    } catch {}
  }, true)
}
