/* Keys of the bad-case form (legend at the top of the form): 1-9 category in the menu's order,
   t / f / w / o status (triaged, fixed, won't fix, open), e notes (Esc leaves them, Ctrl+Enter saves
   from them), Enter triage & next (save & next open), b back to the list. The form works without. */
(function () {
  "use strict";
  var form = document.getElementById("badcase_form");
  if (!form) return;
  var category = document.getElementById("id_category");
  var status = document.getElementById("id_status");
  var notes = document.getElementById("id_notes");
  var STATUS = {t: "triaged", f: "fixed", w: "wont_fix", o: "open"};

  function choose(select, value) {
    if (!select || !select.querySelector('option[value="' + value + '"]')) return false;
    select.value = value;
    select.dispatchEvent(new Event("change", {bubbles: true}));
    return true;
  }
  function chooseCategory(number) {
    var options = Array.prototype.filter.call(category ? category.options : [], function (o) { return o.value; });
    return number <= options.length && choose(category, options[number - 1].value);
  }
  function save() {
    var button = document.getElementById("se-triage-next");
    if (!button) return false;
    if (form.requestSubmit) form.requestSubmit(button); else button.click();
    return true;
  }
  function typingIn(target) {
    if (!target || !target.tagName) return false;
    if (target.isContentEditable || /^(TEXTAREA|SELECT)$/.test(target.tagName)) return true;
    return target.tagName === "INPUT" && !/^(radio|checkbox|button|submit)$/.test(target.type);
  }

  document.addEventListener("keydown", function (event) {
    if (event.altKey || event.metaKey || event.isComposing) return;
    var target = event.target, key = event.key, handled = false;
    if (typingIn(target)) {
      if (key === "Escape") { target.blur(); event.preventDefault(); }
      else if (key === "Enter" && event.ctrlKey && form.contains(target)) { save(); event.preventDefault(); }
      return;
    }
    if (event.ctrlKey) return;
    if (/^[1-9]$/.test(key)) handled = chooseCategory(Number(key));
    else if (STATUS[key]) handled = choose(status, STATUS[key]);
    else if (key === "e" && notes) { notes.focus(); handled = true; }
    else if (key === "Enter") handled = (!target.tagName || !/^(A|BUTTON|SUMMARY)$/.test(target.tagName)) && save();
    else if (key === "b") {
      var back = document.getElementById("se-back-to-list");
      if (back) { window.location.href = back.href; handled = true; }
    }
    if (handled) event.preventDefault();
  });
})();
