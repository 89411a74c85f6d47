import { html, layout, type Html } from './html.ts'

/** The signed-out front page: the operator's token form and the members' email form. */
export function signInPage(input: { csrf: string, message?: Html | string, linkMinutes: number }): string {
  return layout({
    title: 'Sign in',
    body: html`<section class="narrow">
<h1>Sign in to dcgate</h1>
${input.message ? html`<div class="flash error" role="alert"><p>${input.message}</p></div>` : ''}
<div class="card">
<h2>Operator</h2>
<form method="post" action="/dashboard/sign-in" class="stack">
<input type="hidden" name="csrf" value="${input.csrf}">
<label for="token">Admin token</label>
<input id="token" name="token" type="password" autocomplete="current-password" required maxlength="512">
<p class="hint">On the server: the file <code>admin-token</code> in its data directory (<code>.data/</code> by default), or <code>admin.token</code> in the config.</p>
<button type="submit" class="button">Sign in</button>
</form>
</div>
<div class="card">
<h2>Site member</h2>
<form method="post" action="/dashboard/sign-in/email" class="stack">
<input type="hidden" name="csrf" value="${input.csrf}">
<label for="email">Email</label>
<input id="email" name="email" type="email" autocomplete="email" required maxlength="254">
<p class="hint">Members listed in a site's <code>members</code> get a link that works once, for ${input.linkMinutes} minutes.</p>
<button type="submit" class="button secondary">Email me a sign-in link</button>
</form>
</div>
</section>`,
  })
}

export function linkSentPage(linkMinutes: number): string {
  return layout({
    title: 'Check your email',
    body: html`<section class="narrow"><h1>Check your email</h1>
<p>If this address belongs to a member of a site here, a sign-in link is on its way. It works once, for ${linkMinutes} minutes.</p>
<p><a href="/dashboard">Back to sign-in</a></p></section>`,
  })
}

/** Behind the emailed link: one button, since mail scanners open links; opening the page signs nobody in. */
export function linkPage(input: { csrf: string, token: string, maskedEmail: string }): string {
  return layout({
    title: 'Sign in',
    body: html`<section class="narrow"><h1>Sign in as ${input.maskedEmail}</h1>
<form method="post" action="/dashboard/link" class="stack">
<input type="hidden" name="csrf" value="${input.csrf}">
<input type="hidden" name="token" value="${input.token}">
<button type="submit" class="button">Sign in</button>
</form></section>`,
  })
}
