/* The selection of a session list (triage queue, session list) kept across its pages: the ids
   checked on any page are kept in sessionStorage per list, re-checked when their page shows
   again, and sent with the action, which then clears them. Labels come from the action menu's
   data attributes (translated by the server). */
(function () {
  "use strict";
  function ready(fn) {
    if (document.readyState !== "loading") fn(); else document.addEventListener("DOMContentLoaded", fn);
  }
  ready(function () {
    var form = document.getElementById("changelist-form");
    var menu = form && form.querySelector("select[name=action]");
    if (!menu) return;
    var key = "se-selection:" + window.location.pathname;
    var boxes = Array.prototype.slice.call(form.querySelectorAll("input.action-select"));
    var selected;
    try { selected = new Set(JSON.parse(window.sessionStorage.getItem(key) || "[]")); } catch (e) { selected = new Set(); }

    var note = document.createElement("span");
    note.className = "se-selection-note";
    var label = document.createElement("span");
    var clear = document.createElement("a");
    clear.href = "#";
    clear.textContent = " " + menu.dataset.clearLabel;
    note.appendChild(label);
    note.appendChild(clear);
    menu.closest(".actions").appendChild(note);

    function onPage(id) { return boxes.some(function (box) { return box.value === id; }); }
    function elsewhere() { return Array.from(selected).filter(function (id) { return !onPage(id); }); }
    function show() {
      var count = elsewhere().length;
      note.hidden = count === 0;
      label.textContent = menu.dataset.keptLabel.replace("%(n)s", String(count));
    }
    function store() {
      boxes.forEach(function (box) { if (box.checked) selected.add(box.value); else selected.delete(box.value); });
      window.sessionStorage.setItem(key, JSON.stringify(Array.from(selected)));
      show();
    }

    boxes.forEach(function (box) {
      if (selected.has(box.value) && !box.checked) {
        box.checked = true;
        // Django's actions.js counts and highlights on this event.
        box.dispatchEvent(new Event("change", {bubbles: true}));
      }
    });
    form.addEventListener("change", function (event) {
      if (event.target.classList.contains("action-select") || event.target.id === "action-toggle") store();
    });
    form.addEventListener("click", function (event) {
      // "Clear selection" of Django's select-across unchecks the boxes without a change event.
      if (event.target.closest(".clear")) window.setTimeout(store, 0);
    });
    clear.addEventListener("click", function (event) {
      event.preventDefault();
      boxes.forEach(function (box) { if (box.checked) box.click(); });
      selected.clear();
      store();
    });
    form.addEventListener("submit", function () {
      if (!menu.value) return;
      var across = form.querySelector("input.select-across");
      if (!across || across.value !== "1") {
        elsewhere().forEach(function (id) {
          var input = document.createElement("input");
          input.type = "hidden";
          input.name = "_selected_action";
          input.value = id;
          form.appendChild(input);
        });
      }
      window.sessionStorage.removeItem(key);
    });
    show();
  });
})();
