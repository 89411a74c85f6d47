/*
 * dcgate drop-in deletion form (plugins/dsar/client/embed.js), served as {cdn_url}/dsar-embed.js.
 *
 *   <script src="https://t.example.com/dsar-embed.js" data-cop-key="YOUR_COP_KEY"></script>
 *
 * Renders an email box right where the tag sits and posts to /public/data-deletion/request on the host the script
 * came from. Plain JavaScript, no dependencies, no cookies; the person then confirms from their inbox.
 * Optional attributes: data-label, data-button, data-hint, data-title (the form's accessible name), data-lang.
 */
(function () {
  'use strict'
  var STYLE_ID = 'dcgate-dsar-style'
  var CSS = '.dcgate-dsar{margin:1rem 0;max-width:28rem}.dcgate-dsar label{display:block;font-weight:600;margin-bottom:.25rem}'
    + '.dcgate-dsar input{box-sizing:border-box;width:100%;padding:.5rem;font:inherit;border:1px solid #767676;border-radius:4px}'
    + '.dcgate-dsar button{margin-top:.5rem;padding:.5rem 1rem;font:inherit;cursor:pointer}'
    + '.dcgate-dsar .dcgate-dsar-hint{margin:.25rem 0 0;font-size:.9em}.dcgate-dsar [role=status]{margin:.5rem 0 0}'
    + '.dcgate-dsar .dcgate-dsar-error{color:#b00020}'
  var counter = 0

  function text(tag, name, fallback) {
    var value = tag.getAttribute(name)
    return value && value.trim() ? value.trim() : fallback
  }

  function element(name, attributes, content) {
    var node = document.createElement(name)
    for (var key in attributes) if (Object.prototype.hasOwnProperty.call(attributes, key)) node.setAttribute(key, attributes[key])
    if (content) node.textContent = content
    return node
  }

  function render(tag) {
    if (tag.getAttribute('data-dcgate-rendered')) return
    tag.setAttribute('data-dcgate-rendered', 'true')
    var copKey = tag.getAttribute('data-cop-key')
    var base = (tag.src || '').replace(/\/dsar-embed\.js(?:[?#].*)?$/, '')
    if (!copKey || !base) {
      if (window.console) console.warn('dcgate: the deletion form needs data-cop-key on its script tag')
      return
    }
    if (!document.getElementById(STYLE_ID)) {
      var style = element('style', { id: STYLE_ID })
      style.textContent = CSS
      ;(document.head || document.documentElement).appendChild(style)
    }
    var id = 'dcgate-dsar-' + (++counter)
    var form = element('form', { 'class': 'dcgate-dsar', 'novalidate': '', 'aria-label': text(tag, 'data-title', 'Data deletion request') })
    if (tag.getAttribute('data-lang')) form.setAttribute('lang', tag.getAttribute('data-lang'))
    var label = element('label', { 'for': id + '-email' }, text(tag, 'data-label', 'Email address'))
    var input = element('input', {
      'id': id + '-email', 'name': 'email', 'type': 'email', 'required': '', 'autocomplete': 'email',
      'inputmode': 'email', 'spellcheck': 'false', 'aria-describedby': id + '-hint ' + id + '-status',
    })
    var hint = element('p', { 'id': id + '-hint', 'class': 'dcgate-dsar-hint' },
      text(tag, 'data-hint', 'Ask us to delete the personal data we hold about this address. We will email you a link to confirm.'))
    var button = element('button', { 'type': 'submit' }, text(tag, 'data-button', 'Request deletion'))
    var status = element('p', { 'id': id + '-status', 'role': 'status', 'aria-live': 'polite' })
    form.appendChild(label)
    form.appendChild(input)
    form.appendChild(hint)
    form.appendChild(button)
    form.appendChild(status)

    function say(message, isError) {
      status.textContent = message
      status.className = isError ? 'dcgate-dsar-error' : ''
      if (isError) input.setAttribute('aria-invalid', 'true')
      else input.removeAttribute('aria-invalid')
    }

    form.addEventListener('submit', function (event) {
      event.preventDefault()
      if (!input.value.trim() || (input.checkValidity && !input.checkValidity())) {
        say('Enter a valid email address.', true)
        input.focus()
        return
      }
      button.disabled = true
      form.setAttribute('aria-busy', 'true')
      say('Sending…', false)
      // text/plain keeps it a simple request (no CORS preflight); the server reads the JSON either way.
      fetch(base + '/public/data-deletion/request', {
        method: 'POST',
        headers: { 'content-type': 'text/plain;charset=UTF-8' },
        body: JSON.stringify({ email: input.value.trim(), cop_key: copKey, pageUrl: location.href }),
        credentials: 'omit',
      }).then(function (response) {
        return response.json().catch(function () { return {} }).then(function (body) {
          if (response.ok && body.success) {
            say(body.message || 'Your request has been received. Check your inbox for the confirmation link.', false)
            input.value = ''
          }
          else {
            say(body.message || 'The request could not be sent (' + response.status + '). Try again later.', true)
          }
        })
      }, function () {
        say('The request could not be sent. Check your connection and try again.', true)
      }).then(function () {
        button.disabled = false
        form.removeAttribute('aria-busy')
      })
    })

    if (tag.parentNode && tag.parentNode !== document.head) tag.parentNode.insertBefore(form, tag.nextSibling)
    else if (document.body) document.body.appendChild(form)
    else document.addEventListener('DOMContentLoaded', function () { document.body.appendChild(form) })
  }

  var current = document.currentScript
  if (current && current.getAttribute('data-cop-key') !== null) {
    render(current)
    return
  }
  // Without currentScript (very old browsers, or loaded by another script): every tag not rendered yet.
  var tags = document.querySelectorAll('script[src*="dsar-embed.js"][data-cop-key]')
  for (var i = 0; i < tags.length; i++) render(tags[i])
})()
