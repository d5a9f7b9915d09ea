/* Keyboard paging for the triage queue's and the bad cases' changelists: j/k move, x select,
   o/Enter open, n/p page; t takes the next sessions (the queue's "Take next" button). */
(function () {
  "use strict";
  var rows = Array.prototype.slice.call(document.querySelectorAll("#result_list tbody tr"));
  var current = -1;
  function focusRow(index) {
    if (!rows.length) return;
    index = Math.max(0, Math.min(rows.length - 1, index));
    if (current >= 0) rows[current].classList.remove("se-current");
    current = index;
    rows[current].classList.add("se-current");
    rows[current].scrollIntoView({block: "nearest"});
  }
  function pageLink(offset) {
    var here = document.querySelector(".paginator .this-page");
    var links = Array.prototype.slice.call(document.querySelectorAll(".paginator a"));
    if (!here) return null;
    var number = parseInt(here.textContent, 10) + offset;
    return links.filter(function (a) { return parseInt(a.textContent, 10) === number; })[0] || null;
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
        if (current >= 0) { rows[current].querySelector("input.action-select").click(); }
        break;
      case "o": case "Enter":
        if (current >= 0) { window.location.href = rows[current].querySelector("a").href; } else { return; }
        break;
      case "t":
        var take = document.getElementById("se-take-next");
        if (!take) return;
        take.click();
        break;
      case "n": link = pageLink(1); if (link) window.location.href = link.href; break;
      case "p": link = pageLink(-1); if (link) window.location.href = link.href; break;
      default: return;
    }
    event.preventDefault();
  });
})();
