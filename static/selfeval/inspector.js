/* Keys of the session inspector (legend in its decision bar): 1/2/3 judgement, y/n/c verifier
   right, e notes, Enter save & next, s skip, p previous, b back to the list, ? the keys; on the
   claims, j/k next/previous claim, then r judge right, a supported, u unsupported, x contradicted. */
(function () {
  "use strict";
  var form = document.getElementById("review");
  var help = document.getElementById("se-key-help");
  var VERIFIER = {y: "yes", n: "no", c: "unsure"};

  function choose(name, index, value) {
    if (!form) return false;
    var radios = form.querySelectorAll('input[type=radio][name="' + name + '"]');
    var radio = value ? form.querySelector('input[type=radio][name="' + name + '"][value="' + value + '"]') : radios[index];
    if (!radio) return false;
    radio.checked = true;
    radio.focus();
    return true;
  }
  function follow(id) {
    var link = document.getElementById(id);
    if (!link || !link.href) return false;
    window.location.href = link.href;
    return true;
  }
  function save() {
    if (!form) return false;
    var button = document.getElementById("se-save-next") || document.getElementById("se-save");
    if (form.requestSubmit) form.requestSubmit(button); else button.click();
    return true;
  }
  var claims = Array.prototype.slice.call(document.querySelectorAll("article.se-claim"));
  function claimOf(element) {
    return element && element.closest ? element.closest("article.se-claim") : null;
  }
  function moveClaim(step) {
    if (!claims.length) return false;
    var current = claims.indexOf(claimOf(document.activeElement));
    var next = current < 0 ? (step > 0 ? 0 : claims.length - 1) : Math.max(0, Math.min(claims.length - 1, current + step));
    claims[next].focus();
    claims[next].scrollIntoView({block: "center"});
    return true;
  }
  function correct(key) {
    var claim = claimOf(document.activeElement);
    var button = claim && claim.querySelector('.se-correction-form button[data-key="' + key + '"]');
    if (!button) return false;
    if (button.form.requestSubmit) button.form.requestSubmit(button); else button.click();
    return true;
  }
  function typingIn(target) {
    if (!target || !target.tagName) return false;
    if (target.isContentEditable || /^(TEXTAREA|SELECT)$/.test(target.tagName)) return true;
    return target.tagName === "INPUT" && !/^(radio|checkbox|button|submit)$/.test(target.type);
  }

  document.addEventListener("keydown", function (event) {
    if (event.altKey || event.metaKey || event.isComposing) return;
    var target = event.target;
    if (typingIn(target)) {
      var inClaim = claimOf(target);
      if (event.key === "Escape") { if (inClaim) inClaim.focus(); else target.blur(); event.preventDefault(); }
      // A claim's note is sent with the verdict key chosen after Esc, never as "judge right" by Enter.
      else if (event.key === "Enter" && inClaim) event.preventDefault();
      else if (event.key === "Enter" && event.ctrlKey && form && form.contains(target)) { save(); event.preventDefault(); }
      return;
    }
    if (event.ctrlKey) return;
    var key = event.key, handled;
    if (key === "j" || key === "k") handled = moveClaim(key === "j" ? 1 : -1);
    else if (key === "r" || key === "a" || key === "u" || key === "x") handled = correct(key);
    else if (key === "1" || key === "2" || key === "3") handled = choose("judgement", Number(key) - 1);
    else if (VERIFIER[key]) handled = choose("verifier_was_right", -1, VERIFIER[key]);
    else if (key === "e") { var notes = form && form.querySelector("textarea"); if (notes) notes.focus(); handled = !!notes; }
    else if (key === "Enter") handled = (!target.tagName || !/^(A|BUTTON|SUMMARY)$/.test(target.tagName)) && save();
    else if (key === "s") handled = follow("se-skip");
    else if (key === "p") handled = follow("se-previous");
    else if (key === "b") handled = follow("se-back-to-list");
    else if (key === "?") { if (help) help.hidden = !help.hidden; handled = !!help; }
    else if (key === "Escape" && help && !help.hidden) { help.hidden = true; handled = true; }
    if (handled) event.preventDefault();
  });
})();

/* Presence: while the inspector is open, tell the server every few seconds (a soft lock others
   see as "Alice is reviewing this"), show who else has the session open, and say goodbye when
   the page goes away. */
(function () {
  "use strict";
  var banner = document.getElementById("se-presence");
  var token = document.querySelector("input[name=csrfmiddlewaretoken]");
  if (!banner || !token || !window.fetch) return;
  var url = banner.dataset.url;
  var every = Math.max(5, Number(banner.dataset.every) || 30) * 1000;

  function beat() {
    var body = new FormData();
    body.append("csrfmiddlewaretoken", token.value);
    fetch(url, {method: "POST", body: body, credentials: "same-origin", headers: {"X-Requested-With": "fetch"}})
      .then(function (response) { return response.ok ? response.json() : null; })
      .then(function (data) {
        if (!data) return;
        banner.textContent = data.label;
        banner.hidden = !data.label;
      })
      .catch(function () { /* offline for a moment: the next beat tries again */ });
  }
  beat();
  var timer = window.setInterval(beat, every);
  window.addEventListener("pagehide", function () {
    window.clearInterval(timer);
    var body = new FormData();
    body.append("csrfmiddlewaretoken", token.value);
    body.append("release", "1");
    if (navigator.sendBeacon) navigator.sendBeacon(url, body);
  });
})();

/* Session inspector: hovering (or focusing) a claim highlights its sentence in the rendered answer.
   The sentence text comes from the server (data-sentence); it is looked for in the answer's text
   nodes and marked with the CSS Custom Highlight API, so the answer's markup is never changed. */
(function () {
  "use strict";
  var answer = document.getElementById("se-answer");
  if (!answer || !window.CSS || !CSS.highlights || typeof Highlight === "undefined") return;
  var fold = document.getElementById("se-answer-more");  // a long answer's "Show more" toggle
  var foldLabel = fold ? document.querySelector("label[for='se-answer-more']") : null;

  function rangeOf(text) {
    var walker = document.createTreeWalker(answer, NodeFilter.SHOW_TEXT);
    var nodes = [], whole = "", node;
    while ((node = walker.nextNode())) { nodes.push([node, whole.length]); whole += node.nodeValue; }
    var start = whole.indexOf(text);
    if (start < 0) return null;
    var end = start + text.length, range = document.createRange();
    for (var i = 0; i < nodes.length; i++) {
      var n = nodes[i][0], at = nodes[i][1], length = n.nodeValue.length;
      if (start >= at && start <= at + length) range.setStart(n, start - at);
      if (end >= at && end <= at + length) { range.setEnd(n, end - at); break; }
    }
    return range;
  }
  function show(event) {
    var claim = event.currentTarget, range = rangeOf(claim.getAttribute("data-sentence"));
    if (!range) return;
    CSS.highlights.set("se-claim-sentence", new Highlight(range));
    // The sentence is in the folded part: point at "Show more" rather than unfold under the pointer.
    if (foldLabel && !fold.checked && range.getBoundingClientRect().top > answer.getBoundingClientRect().bottom - 16) {
      foldLabel.classList.add("se-fold-hint");
    }
  }
  function hide() {
    CSS.highlights.delete("se-claim-sentence");
    if (foldLabel) foldLabel.classList.remove("se-fold-hint");
  }
  document.querySelectorAll(".se-claim[data-sentence]").forEach(function (claim) {
    claim.addEventListener("mouseenter", show);
    claim.addEventListener("focus", show);
    claim.addEventListener("mouseleave", hide);
    claim.addEventListener("blur", hide);
  });
})();
