// The dashboard's only script (progressive enhancement: every action works without it).
// 1. Dates: <time datetime> shows UTC from the server; here it is rewritten in the viewer's time zone.
// 2. Copy buttons: a button[data-copy] copies the value of the field it names, and says so.
(function () {
  'use strict'
  var format = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'short' })
  document.querySelectorAll('time[datetime]').forEach(function (node) {
    var date = new Date(node.getAttribute('datetime'))
    if (!isNaN(date.getTime())) {
      node.title = node.textContent
      node.textContent = format.format(date)
    }
  })
  document.querySelectorAll('button[data-copy]').forEach(function (button) {
    var field = document.getElementById(button.getAttribute('data-copy'))
    if (!field || !navigator.clipboard) return
    button.hidden = false
    button.addEventListener('click', function () {
      navigator.clipboard.writeText(field.value).then(function () {
        button.textContent = 'Copied'
        setTimeout(function () { button.textContent = 'Copy' }, 2000)
      }, function () {
        field.select()
      })
    })
  })
})()
