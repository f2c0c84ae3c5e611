// coordbench live UI: the one script its pages load (served from the package; no CDN, nothing fetched elsewhere).
// Two jobs. On the runs page, swap in the table's rows when a run is evaluated: server-sent events
// from /ui/events, or polling every 5 s where they cannot be used. On a run's page, clicking an
// agent in a graph dims every other agent's spans and lanes (click it again to show all).
// It never builds markup from data: rows come rendered and escaped by the server.
(function () {
  "use strict";

  var status = document.querySelector("[data-live-status]");
  function say(text) { if (status) { status.textContent = text; } }

  var body = document.querySelector("tbody[data-live-runs]");
  if (body) {
    var url = body.getAttribute("data-live-runs");
    var busy = false, again = false, polling = null;
    var refresh = function () {
      if (busy) { again = true; return; }
      busy = true;
      fetch(url, { credentials: "same-origin", headers: { "Accept": "text/html" } })
        .then(function (r) { return r.ok ? r.text() : null; })
        .then(function (html) {
          if (html === null) { return; }
          var template = document.createElement("template");
          template.innerHTML = "<table><tbody>" + html + "</tbody></table>";
          var fresh = template.content.querySelector("tbody");
          var picked = {};
          body.querySelectorAll("input[type=radio]:checked").forEach(function (i) { picked[i.name] = i.value; });
          body.replaceChildren.apply(body, Array.prototype.slice.call(fresh.childNodes));
          Object.keys(picked).forEach(function (name) {
            var kept = body.querySelector("input[name=" + name + "][value='" + picked[name] + "']");
            if (kept) { kept.checked = true; }
          });
          body.setAttribute("data-refreshed", String(Date.now()));
        })
        .catch(function () { /* the next event or poll tries again */ })
        .then(function () { busy = false; if (again) { again = false; refresh(); } });
    };
    var poll = function () {
      if (polling === null) { polling = setInterval(refresh, 5000); say("live: polling every 5 s"); }
    };
    if (typeof EventSource === "function") {
      // each event carries the count of evaluations recorded so far: rows are fetched only when it moved
      var seen = body.getAttribute("data-changes");
      var moved = function (event) {
        if (event.data !== seen) { seen = event.data; refresh(); }
      };
      var source = new EventSource("/ui/events");
      source.addEventListener("ready", function (event) { say("live"); moved(event); });
      source.addEventListener("evaluated", moved);
      source.addEventListener("off", function () { source.close(); say("online evaluation is off"); });
      source.onerror = function () {
        if (source.readyState === EventSource.CLOSED) { poll(); } else { say("live: reconnecting"); }
      };
    } else {
      poll();
    }
  }

  var graphs = document.querySelectorAll("svg.agent-graph");
  var selected = null;
  function filter(agent) {
    selected = selected === agent ? null : agent;
    document.querySelectorAll("svg.agent-graph g.node").forEach(function (node) {
      node.classList.toggle("selected", selected !== null && node.getAttribute("data-agent") === selected);
    });
    document.querySelectorAll("svg.waterfall g[data-span]").forEach(function (row) {
      row.classList.toggle("dimmed", selected !== null && row.getAttribute("data-owner") !== selected);
    });
    document.querySelectorAll("svg.lanes g.lane").forEach(function (lane) {
      lane.classList.toggle("dimmed", selected !== null && lane.getAttribute("data-lane") !== selected);
    });
    document.querySelectorAll(".waterfall-box").forEach(function (box) {
      if (selected === null) { box.removeAttribute("data-filter"); } else { box.setAttribute("data-filter", selected); }
    });
    say(selected === null ? "every agent shown" : "only " + selected + "'s spans");
  }
  graphs.forEach(function (svg) {
    svg.addEventListener("click", function (event) {
      var node = event.target.closest("g.node");
      if (node) { filter(node.getAttribute("data-agent")); }
    });
  });
})();
