// Keeps a page of the web view current without reloading it: every `data-refresh` seconds it fetches
// the page's JSON (`data-poll` on <body>), replaces only the parts (<section class="part">) whose
// digest changed, and stops for good once the JSON says the page can no longer change ("live": false).
// window.unoArenaPoll tells tests (and the curious) how many polls ran and whether it has stopped.
(function () {
  "use strict";
  var body = document.body;
  var url = body.dataset.poll;
  var seconds = Number(body.dataset.refresh) || 5;
  var state = (window.unoArenaPoll = { polls: 0, replaced: 0, stopped: !url, timer: null });
  if (!url) return;

  function schedule(delay) {
    state.timer = window.setTimeout(poll, delay * 1000);
  }

  function stop() {
    state.stopped = true;
    state.timer = null;
    body.removeAttribute("data-poll");
  }

  function apply(page) {
    Object.keys(page.parts || {}).forEach(function (name) {
      var part = page.parts[name];
      var section = document.getElementById(name);
      if (section && section.dataset.digest !== part.digest) {
        section.innerHTML = part.html;
        section.dataset.digest = part.digest;
        state.replaced += 1;
      }
    });
    var updated = document.getElementById("updated");
    if (updated) {
      updated.textContent = page.live
        ? "Updates every " + seconds + " s; updated " + page.updated + "."
        : "Final: nothing here changes any more.";
    }
  }

  function poll() {
    state.timer = null;
    state.polls += 1;
    fetch(url, { headers: { Accept: "application/json" }, cache: "no-store" })
      .then(function (response) {
        if (response.status === 404) throw new Error("gone");  // deleted meanwhile: nothing to follow
        if (!response.ok) return null;  // e.g. 503 while Redis is down: try again later
        return response.json();
      })
      .then(function (page) {
        if (page) apply(page);
        if (page && !page.live) stop();
        else schedule(seconds);
      })
      .catch(function (error) {
        if (error && error.message === "gone") stop();
        else schedule(seconds);  // the network blinked: try again later
      });
  }

  schedule(seconds);
})();
