/* Keys of the case form (legend at the top of the form): a save & approve, r save & reject,
   s save, e review note (Esc leaves it). Approving a case from a doubted session still needs its
   confirmation box: "a" then moves to the box instead of submitting. The form works without. */
(function () {
  "use strict";
  var form = document.getElementById("case_form");
  if (!form) return;

  function submitWith(name) {
    var button = form.querySelector('input[type=submit][name="' + name + '"]');
    if (!button) return false;
    if (form.requestSubmit) form.requestSubmit(button); else button.click();
    return true;
  }
  function approve() {
    var confirm = document.getElementById("id_confirm_weak_session");
    if (confirm && !confirm.checked) { confirm.focus(); return true; }
    return submitWith("_approve");
  }
  function typingIn(target) {
    if (!target || !target.tagName) return false;
    if (target.isContentEditable || /^(TEXTAREA|SELECT)$/.test(target.tagName)) return true;
    return target.tagName === "INPUT" && !/^(radio|checkbox|button|submit)$/.test(target.type);
  }

  document.addEventListener("keydown", function (event) {
    if (event.altKey || event.metaKey || event.ctrlKey || event.isComposing) return;
    var target = event.target, key = event.key, handled = false;
    if (typingIn(target)) {
      if (key === "Escape") { target.blur(); event.preventDefault(); }
      return;
    }
    if (key === "a") handled = approve();
    else if (key === "r") handled = submitWith("_reject");
    else if (key === "s") handled = submitWith("_continue");
    else if (key === "e") {
      var note = document.getElementById("id_decision_note");
      if (note) { note.focus(); handled = true; }
    }
    if (handled) event.preventDefault();
  });
})();
