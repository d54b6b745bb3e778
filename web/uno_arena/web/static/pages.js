// Keeps a page of the web view current without reloading it: every `data-refresh` seconds it fetches
// the page again (its own address, `data-poll` on <body>), replaces only the parts (<section
// class="part">) whose digest changed, and stops for good once the page it fetched no longer polls (its
// <body> has no `data-poll`: nothing on it can change any more). The JSON API (/api/...) is data only;
// the HTML comes from the page itself.
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
    var sections = page.querySelectorAll("section.part[id]");
    Array.prototype.forEach.call(sections, function (fresh) {
      var section = document.getElementById(fresh.id);
      if (section && section.dataset.digest !== fresh.dataset.digest) {
        section.innerHTML = fresh.innerHTML;
        section.dataset.digest = fresh.dataset.digest;
        state.replaced += 1;
      }
    });
    var updated = document.getElementById("updated");
    var said = page.getElementById("updated");
    if (updated && said) updated.textContent = said.textContent;
  }

  function poll() {
    state.timer = null;
    state.polls += 1;
    fetch(url, { headers: { Accept: "text/html" }, cache: "no-store" })
      .then(function (response) {
        if (response.status === 404) throw new Error("gone");  // deleted meanwhile: nothing to follow
        if (!response.ok) return null;  // e.g. 503 while Redis is down: try again later
        return response.text();
      })
      .then(function (html) {
        var page = html === null ? null : new DOMParser().parseFromString(html, "text/html");
        if (page) apply(page);
        if (page && !page.body.dataset.poll) stop();
        else schedule(seconds);
      })
      .catch(function (error) {
        if (error && error.message === "gone") stop();
        else schedule(seconds);  // the network blinked: try again later
      });
  }

  schedule(seconds);
})();
