/* Keyboard paging for the triage queue: j/k move, x select, o/Enter open, n/p page. No dependencies. */
(function () {
  "use strict";
  var rows = Array.prototype.slice.call(document.querySelectorAll("table.se-queue tbody tr[data-href]"));
  var current = -1;
  function focusRow(index) {
    if (!rows.length) return;
    index = Math.max(0, Math.min(rows.length - 1, index));
    if (current >= 0) rows[current].classList.remove("se-current");
    current = index;
    rows[current].classList.add("se-current");
    rows[current].scrollIntoView({block: "nearest"});
  }
  var all = document.getElementById("triage-all");
  if (all) {
    all.addEventListener("change", function () {
      rows.forEach(function (row) { row.querySelector("input[type=checkbox]").checked = all.checked; });
    });
  }
  document.addEventListener("keydown", function (event) {
    var target = event.target;
    if (event.altKey || event.ctrlKey || event.metaKey) return;
    if (target && /^(INPUT|TEXTAREA|SELECT|BUTTON)$/.test(target.tagName) && target.type !== "checkbox") return;
    var link;
    switch (event.key) {
      case "j": focusRow(current + 1); break;
      case "k": focusRow(current - 1); break;
      case "x":
        if (current >= 0) { var box = rows[current].querySelector("input[type=checkbox]"); box.checked = !box.checked; }
        break;
      case "o": case "Enter":
        if (current >= 0) { window.location.href = rows[current].getAttribute("data-href"); } else { return; }
        break;
      case "n": link = document.getElementById("triage-next"); if (link) window.location.href = link.href; break;
      case "p": link = document.getElementById("triage-prev"); if (link) window.location.href = link.href; break;
      default: return;
    }
    event.preventDefault();
  });
})();
