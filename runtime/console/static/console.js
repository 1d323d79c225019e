// chronos console: live updates.
//
// Every page is complete server-rendered HTML and works without this
// script. With it, the page fetches itself again every data-refresh ms
// (while the tab is visible and live updates are on) and swaps in the
// elements marked data-live whose content changed, keyed by their
// data-live value. A region the operator is using (it holds the focus or
// an open <details>) is left alone until they are done; its sub-regions
// are still updated one by one.
(function () {
  "use strict";
  var body = document.body;
  var every = parseInt(body.getAttribute("data-refresh") || "0", 10);
  var live = document.getElementById("live");
  var toggle = document.getElementById("live-toggle");
  var status = document.getElementById("live-status");
  if (!every || !live || !window.fetch || !window.DOMParser) {
    return;
  }
  live.hidden = false;
  var key = "chronos-console-live";
  var on = window.localStorage ? localStorage.getItem(key) !== "off" : true;
  var timer = null;
  var inflight = false;

  function say(text, bad) {
    status.textContent = text;
    status.className = bad ? "bad" : "";
  }

  function show() {
    toggle.textContent = on ? "Pause live updates" : "Resume live updates";
    toggle.setAttribute("aria-pressed", on ? "false" : "true");
    if (!on) {
      say("live updates paused");
    }
  }

  function busy(el) {
    var a = document.activeElement;
    if (a && a !== document.body && el.contains(a)) {
      return true;
    }
    return el.querySelector("details[open]") !== null;
  }

  function apply(doc) {
    var done = {};
    var regions = doc.querySelectorAll("[data-live]");
    for (var i = 0; i < regions.length; i++) {
      var next = regions[i];
      var name = next.getAttribute("data-live");
      var outer = next.parentElement && next.parentElement.closest("[data-live]");
      if (outer && done[outer.getAttribute("data-live")]) {
        done[name] = true;
        continue;
      }
      var cur = document.querySelector('[data-live="' + CSS.escape(name) + '"]');
      if (!cur) {
        continue;
      }
      if (cur.outerHTML === next.outerHTML) {
        done[name] = true;
        continue;
      }
      if (busy(cur)) {
        continue;
      }
      cur.replaceWith(document.importNode(next, true));
      done[name] = true;
    }
  }

  function tick() {
    timer = null;
    if (!on || document.visibilityState === "hidden" || inflight) {
      schedule();
      return;
    }
    inflight = true;
    fetch(window.location.href, { headers: { "X-Chronos-Live": "1" }, credentials: "same-origin", cache: "no-store" })
      .then(function (resp) {
        return resp.text().then(function (text) {
          if (!resp.ok) {
            throw new Error(resp.status + " " + text.split("\n")[0]);
          }
          apply(new DOMParser().parseFromString(text, "text/html"));
          say("live · updated " + new Date().toISOString().slice(11, 19) + "Z");
        });
      })
      .catch(function (err) {
        say("update failed: " + err.message, true);
      })
      .then(function () {
        inflight = false;
        schedule();
      });
  }

  function schedule() {
    if (timer === null) {
      timer = window.setTimeout(tick, every);
    }
  }

  toggle.addEventListener("click", function () {
    on = !on;
    if (window.localStorage) {
      localStorage.setItem(key, on ? "on" : "off");
    }
    show();
    if (on) {
      tick();
    }
  });
  document.addEventListener("visibilitychange", function () {
    if (document.visibilityState === "visible" && on) {
      tick();
    }
  });
  show();
  if (on) {
    say("live");
  }
  schedule();
})();
