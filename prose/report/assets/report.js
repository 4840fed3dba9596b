// The interactive parts of a prose run report: the timeline, the list of calls (virtualised:
// only the rows in view are in the page), a call's details, and the per-slot transcripts.
// Everything from the trace is put into the page with textContent, never as HTML.
(function () {
  "use strict";
  var data = JSON.parse(document.getElementById("run-data").textContent);
  var steps = data.steps;
  var ROW = 28;

  function el(tag, cls, text) {
    var node = document.createElement(tag);
    if (cls) node.className = cls;
    if (text !== undefined && text !== null) node.textContent = String(text);
    return node;
  }
  function ms(value) {
    return value >= 1000 ? (value / 1000).toFixed(2) + " s" : value.toFixed(0) + " ms";
  }
  function usd(value) { return "$" + Number(value || 0).toFixed(6); }
  function flags(step) {
    var out = [];
    if (step.failed) out.push("failed");
    if (step.retry) out.push("retry " + step.attempt);
    if (step.cut) out.push("cut at the token cap");
    if (step.cache) out.push("cached");
    return out;
  }
  function title(step) {
    return step.k === "judge" ? "judge " + step.kind : "call " + step.label;
  }

  // ---- the lanes: every step as a bar, time to scale, overlapping steps on their own lane ----
  function drawLanes() {
    var canvas = document.getElementById("lanes");
    if (!canvas || !canvas.getContext) return;
    var lanes = data.lanes, wall = Math.max(data.wall, 1);
    var laneH = 14, width = canvas.parentNode.clientWidth || 900;
    var ratio = window.devicePixelRatio || 1;
    canvas.width = width * ratio;
    canvas.height = (lanes * laneH + 4) * ratio;
    canvas.style.width = width + "px";
    canvas.style.height = lanes * laneH + 4 + "px";
    var ctx = canvas.getContext("2d");
    ctx.scale(ratio, ratio);
    for (var i = 0; i < steps.length; i++) {
      var s = steps[i];
      var x = (s.t / wall) * width, w = Math.max(2, (s.d / wall) * width);
      ctx.fillStyle = s.failed ? "#c62828" : s.k === "judge" ? "#8e6ac8" : s.retry ? "#ef8f00" : "#3f7fbf";
      ctx.fillRect(x, s.lane * laneH + 2, w, laneH - 3);
    }
    canvas.onclick = function (event) {
      var box = canvas.getBoundingClientRect();
      var t = ((event.clientX - box.left) / width) * wall;
      var lane = Math.floor((event.clientY - box.top - 2) / laneH);
      var best = -1, gap = Infinity;
      for (var j = 0; j < steps.length; j++) {
        var c = steps[j];
        if (c.lane !== lane) continue;
        var d = t < c.t ? c.t - t : t > c.t + c.d ? t - c.t - c.d : 0;
        if (d < gap) { gap = d; best = j; }
      }
      if (best >= 0) openStep(best);
    };
  }

  // ---- the list of steps, virtualised ----
  var list = document.getElementById("steps");
  var spacer = el("div", "spacer");
  spacer.style.height = steps.length * ROW + "px";
  list.appendChild(spacer);
  list.setAttribute("data-rows", String(steps.length));
  list.style.height = Math.min(560, Math.max(60, steps.length * ROW + 2)) + "px";
  var shown = {};

  function row(index) {
    var s = steps[index], wall = Math.max(data.wall, 1);
    var node = el("div", "row " + s.k + (s.failed ? " failed" : "") + (s.retry ? " retry" : ""));
    node.style.top = index * ROW + "px";
    node.setAttribute("data-index", String(index));
    node.setAttribute("role", "button");
    node.tabIndex = 0;
    node.appendChild(el("span", "c-id", s.id));
    node.appendChild(el("span", "c-slot", s.k === "judge" ? "judge: " + s.text : s.label));
    node.appendChild(el("span", "c-model", s.model || ""));
    var track = el("span", "c-track");
    var bar = el("span", "bar");
    bar.style.left = (100 * s.t / wall).toFixed(3) + "%";
    bar.style.width = Math.max(0.4, 100 * s.d / wall).toFixed(3) + "%";
    track.appendChild(bar);
    node.appendChild(track);
    node.appendChild(el("span", "c-num", ms(s.d)));
    node.appendChild(el("span", "c-num", s.pin + s.pout));
    node.appendChild(el("span", "c-flags", flags(s).join(" ")));
    node.onclick = function () { openStep(index); };
    node.onkeydown = function (event) { if (event.key === "Enter") openStep(index); };
    return node;
  }
  function render() {
    var first = Math.max(0, Math.floor(list.scrollTop / ROW) - 10);
    var last = Math.min(steps.length, Math.ceil((list.scrollTop + list.clientHeight) / ROW) + 10);
    var keep = {};
    for (var i = first; i < last; i++) {
      keep[i] = true;
      if (!shown[i]) { shown[i] = row(i); list.appendChild(shown[i]); }
    }
    for (var key in shown) {
      if (!keep[key]) { list.removeChild(shown[key]); delete shown[key]; }
    }
  }
  var pending = false;
  list.addEventListener("scroll", function () {
    if (pending) return;
    pending = true;
    window.requestAnimationFrame(function () { pending = false; render(); });
  });

  // ---- one step's details ----
  var detail = document.getElementById("detail");
  function field(grid, name, value) {
    if (value === undefined || value === null || value === "") return;
    grid.appendChild(el("dt", null, name));
    grid.appendChild(el("dd", null, value));
  }
  function openStep(index) {
    var s = steps[index];
    var body = document.getElementById("detail-body");
    body.textContent = "";
    document.getElementById("detail-title").textContent = title(s) + " (" + s.id + ")";
    var grid = el("dl", "meta");
    field(grid, "slot", s.k === "call" ? s.label : "judge");
    field(grid, "model", s.model);
    field(grid, "attempt", s.attempt);
    field(grid, "tokens", s.pin + " prompt + " + s.pout + " completion");
    field(grid, "cost", usd(s.cost));
    field(grid, "latency", ms(s.d) + " (started at " + ms(s.t) + ")");
    field(grid, "requests", s.requests);
    field(grid, "source", s.file ? s.file + ":" + s.line + (s.col ? ":" + s.col : "") : "");
    field(grid, "trace line", s.tline);
    field(grid, "loop path", s.path);
    field(grid, "branch", s.branch);
    field(grid, "cached", s.cache ? "yes (served from the cache)" : "");
    field(grid, "answered by", s.by);
    field(grid, "cut", s.cut ? "the reply stopped at the token cap (raise the slot's max_tokens)" : "");
    body.appendChild(grid);
    if (s.src) body.appendChild(el("pre", "source", s.line + " | " + s.src));
    if (s.k === "judge") {
      body.appendChild(el("h4", null, "Decision"));
      body.appendChild(el("pre", "reply", JSON.stringify(s.decision) + (s.reason ? "\n" + s.reason : "")));
      if (s.values) { body.appendChild(el("h4", null, "Values it saw")); body.appendChild(el("pre", null, s.values)); }
    }
    if (s.k === "call") {
      var policy = data.policies[s.slot] || null;
      body.appendChild(el("h4", null, "Policy"));
      var p = el("dl", "meta");
      if (policy) {
        field(p, "requires", (policy.requires || []).join(", ") || "-");
        field(p, "sees only", (policy.sees_only || []).join(", ") || "-");
        field(p, "hidden by", (policy.hidden || []).join("; ") || "-");
      }
      field(p, "verdict", s.verdict);
      body.appendChild(p);
      body.appendChild(el("h4", null, "Provenance of its inputs"));
      body.appendChild(el("p", "prov", s.prov.length ? "carries the output of " + s.prov.join(", ") +
        (s.trans.length > s.prov.length ? " (indirectly also " + s.trans.filter(function (x) { return s.prov.indexOf(x) < 0; }).join(", ") + ")" : "")
        : "parameters and config only (no slot's output)"));
    }
    body.appendChild(el("h4", null, "Messages sent"));
    var messages = el("div", "messages");
    for (var i = 0; i < s.msgs.length; i++) {
      var m = el("div", "message " + s.msgs[i].role);
      m.appendChild(el("div", "role", s.msgs[i].role));
      m.appendChild(el("pre", null, s.msgs[i].content));
      messages.appendChild(m);
    }
    body.appendChild(messages);
    if (s.tools && s.tools.length) {
      // An agent's tool calls, nested under its call in the order they ran.
      body.appendChild(el("h4", null, "Tool calls (" + s.tools.length + ")"));
      var list = el("ol", "tool-calls");
      for (var t = 0; t < s.tools.length; t++) {
        var tc = s.tools[t];
        var item = el("li", "tool-call" + (tc.err ? " failed" : ""));
        item.appendChild(el("div", "role", "turn " + tc.turn + ": " + tc.tool + " " + tc.args +
          "  (" + tc.d.toFixed(1) + " ms" + (tc.iso ? ", " + tc.iso : "") + ", trace line " + tc.tline + ")"));
        item.appendChild(el("pre", tc.err ? "error" : null, tc.err ? tc.err : tc.out));
        list.appendChild(item);
      }
      body.appendChild(list);
    }
    if (s.err) { body.appendChild(el("h4", "bad", "Error")); body.appendChild(el("pre", "error", s.err)); }
    if (s.k === "call") { body.appendChild(el("h4", null, "Reply")); body.appendChild(el("pre", "reply", s.out)); }
    detail.hidden = false;
    detail.setAttribute("data-open", s.id);
    document.getElementById("detail-close").focus();
  }
  document.getElementById("detail-close").onclick = function () { detail.hidden = true; };
  document.addEventListener("keydown", function (event) {
    if (event.key === "Escape") detail.hidden = true;
  });

  // ---- per-slot transcripts, paged ----
  var PAGE = 25;
  var tabs = document.getElementById("transcript-tabs");
  var pane = document.getElementById("transcript");
  var bySlot = {};
  for (var i = 0; i < steps.length; i++) {
    if (steps[i].k !== "call") continue;
    (bySlot[steps[i].slot] = bySlot[steps[i].slot] || []).push(i);
  }
  function entry(index) {
    var s = steps[index];
    var box = el("article", "turn" + (s.failed ? " failed" : ""));
    var head = el("h4", null, s.id + ": " + s.label + (s.path ? "  " + s.path : "") + "  (line " + s.line + ")");
    head.onclick = function () { openStep(index); };
    box.appendChild(head);
    box.appendChild(el("p", "prov", s.prov.length ? "its inputs carry the output of " + s.prov.join(", ") : "its inputs: parameters and config only"));
    for (var j = 0; j < s.msgs.length; j++) {
      if (s.msgs[j].role === "system" && j > 0) continue;
      box.appendChild(el("div", "role", "saw (" + s.msgs[j].role + ")"));
      box.appendChild(el("pre", null, s.msgs[j].content));
    }
    box.appendChild(el("div", "role", s.err ? "failed" : s.cut ? "produced (cut at the token cap)" : "produced"));
    box.appendChild(el("pre", s.err ? "error" : "reply", s.err || s.out));
    return box;
  }
  function showSlot(slot, button) {
    var items = bySlot[slot] || [];
    pane.textContent = "";
    var buttons = tabs.querySelectorAll("button");
    for (var b = 0; b < buttons.length; b++) buttons[b].setAttribute("aria-selected", "false");
    button.setAttribute("aria-selected", "true");
    var count = 0;
    var more = el("button", "more", "");
    function page() {
      var upto = Math.min(items.length, count + PAGE);
      for (; count < upto; count++) pane.insertBefore(entry(items[count]), more);
      more.textContent = "show " + Math.min(PAGE, items.length - count) + " more of " + (items.length - count);
      more.hidden = count >= items.length;
    }
    more.onclick = page;
    pane.appendChild(more);
    page();
  }
  Object.keys(bySlot).sort().forEach(function (slot, n) {
    var button = el("button", null, slot + " (" + bySlot[slot].length + ")");
    button.setAttribute("role", "tab");
    button.onclick = function () { showSlot(slot, button); };
    tabs.appendChild(button);
    if (n === 0) showSlot(slot, button);
  });

  render();
  drawLanes();
  window.addEventListener("resize", drawLanes);
  document.body.setAttribute("data-ready-ms", String(Math.round(window.performance.now())));
  document.body.setAttribute("data-ready", "true");
})();
