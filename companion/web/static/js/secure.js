// A plain-HTTP page of a table that also serves HTTPS (companion serve
// --https): if this phone already trusts the table's certificate authority,
// go on to the same page over https, where the screen stays on by itself
// (the Wake Lock API needs a secure context). A phone that does not trust
// it yet stays here, with no warning page: the probe fails quietly, and the
// page offers the one-time trust step (/ca).
(function () {
  'use strict';
  var meta = document.querySelector('meta[name="tc-secure-origin"]');
  if (!meta || location.protocol !== 'http:' || !window.fetch) return;
  var origin = meta.content;
  fetch(origin + '/static/js/secure.js', {mode: 'no-cors', cache: 'no-store'})
    .then(function () {
      document.documentElement.dataset.secure = 'moving';
      location.replace(origin + location.pathname + location.search + location.hash);
    })
    .catch(function () { document.documentElement.dataset.secure = 'untrusted'; });
})();
