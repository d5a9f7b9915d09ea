/* Submits the language selector on change (the form also works without JavaScript). */
(function () {
  "use strict";
  var select = document.getElementById("se-language");
  if (select) select.addEventListener("change", function () { select.form.submit(); });
})();
