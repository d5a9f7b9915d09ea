/* Warns before leaving a change form with unsaved edits; its script tag names the form (data-form). */
(function () {
  "use strict";
  var form = document.getElementById(document.currentScript.dataset.form);
  if (!form) return;
  function snapshot() { return new URLSearchParams(new FormData(form)).toString(); }
  var saved = snapshot();
  var submitting = false;
  form.addEventListener("submit", function () { submitting = true; });
  window.addEventListener("beforeunload", function (event) {
    if (submitting || snapshot() === saved) return;
    event.preventDefault();
    event.returnValue = "";
  });
})();
