// arcsim timeline: draws the embedded run on one canvas. Only what is on screen is drawn: rows are
// virtualised (only the lanes in view), and within a lane the events in the visible time range are
// found by binary search and thinned to one per pixel, so tens of thousands of events stay fast.
(async function () {
  'use strict';
  const body = document.body;
  const errors = [];
  function fail(message) {
    errors.push(String(message));
    body.dataset.errors = String(errors.length);
    const box = document.getElementById('errors');
    if (box) box.textContent = 'page error: ' + errors.join('; ');
  }
  window.addEventListener('error', (e) => fail(e.message));
  window.addEventListener('unhandledrejection', (e) => fail(e.reason));

  // The data is gzipped JSON in base64 (data-encoding="gzip+base64"); the browser inflates it.
  async function unpack(element) {
    const bytes = Uint8Array.from(atob(element.textContent.trim()), (c) => c.charCodeAt(0));
    const stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream('gzip'));
    return new Response(stream).text();
  }
  const data = JSON.parse(await unpack(document.getElementById('arcsim-data')));
  const E = data.events;
  const A = data.arrows;
  const N = E.t.length;
  const KIND = {};
  data.kinds.forEach((k, i) => { KIND[k] = i; });
  const COLORS = {
    'request': '#3b6fd8', 'refused': '#e08a00', 'failed': '#d93025', 'commit': '#2e7d32',
    'watch-open': '#8e63c9', 'delivery': '#8e63c9', 'watch-other': '#b8a3dc', 'github': '#111111',
    'github-call': '#9aa0ac', 'kubelet': '#00838f', 'world': '#1565c0', 'fault': '#ef6c00',
    'gc': '#6d4c41', 'other': '#7b8190',
  };
  const PHASES = {
    Pending: '#ffe08a', Running: '#8fd18f', Succeeded: '#9ec5fe', Failed: '#f4a3a3',
    Outdated: '#d0d0d0', Unknown: '#d0d0d0',
  };
  const SECTION_NAMES = {
    'world': 'world', 'actors': 'API clients (requests →)', 'api-server': 'API server',
    'watches': 'watch streams (deliveries, arrows from the commit: lag)', 'involved': 'what the violation is about',
    'github': 'GitHub service', 'runners': 'runners', 'objects': 'objects (phase bands)',
  };
  const REQUEST_KINDS = new Set([KIND['request'], KIND['refused'], KIND['failed'], KIND['watch-open']]);
  const LABEL_W = 270, AXIS_H = 30, ROW_H = 18;

  // Indexes: events per lane (already in time order), bands per lane, arrows by start time.
  const laneEvents = data.lanes.map(() => []);
  for (let i = 0; i < N; i++) laneEvents[E.lane[i]].push(i);
  const laneBand = data.lanes.map(() => null);
  data.bands.forEach((b) => { laneBand[b.lane] = b.segments; });
  const arrowOrder = Array.from(A.event.keys()).sort((a, b) => A.from_t[a] - A.from_t[b]);
  const arrowFrom = arrowOrder.map((i) => A.from_t[i]);
  let maxSpan = 0;
  for (let i = 0; i < A.event.length; i++) maxSpan = Math.max(maxSpan, A.to_t[i] - A.from_t[i]);

  const end = Math.max(1, data.meta.end_ms);
  const state = {
    t0: 0, t1: end, scroll: 0, filter: '', selected: -1, violation: data.violations.length ? 0 : -1,
    collapsed: {}, eventOk: null, laneOk: null, rows: [],
  };
  const cited = new Set();
  const involvedLanes = new Set();

  const canvas = document.getElementById('timeline');
  const ctx = canvas.getContext('2d');
  const plot = document.getElementById('plot');
  let width = 0, height = 0;

  function lowerBound(arr, value, key) {
    let lo = 0, hi = arr.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (key(arr[mid]) < value) lo = mid + 1; else hi = mid;
    }
    return lo;
  }
  const x = (t) => LABEL_W + ((t - state.t0) / (state.t1 - state.t0)) * (width - LABEL_W);
  const tAt = (px) => state.t0 + ((px - LABEL_W) / (width - LABEL_W)) * (state.t1 - state.t0);

  function fmt(ms) {
    const s = ms / 1000;
    const span = state.t1 - state.t0;
    if (span < 20000) return s.toFixed(3) + ' s';
    if (span < 600000) return s.toFixed(1) + ' s';
    return s.toFixed(0) + ' s';
  }

  // Filtering by object: an event passes if one of its subjects (or its lane) contains the text.
  function applyFilter() {
    const f = state.filter.trim().toLowerCase();
    if (!f) { state.eventOk = null; state.laneOk = null; layout(); return; }
    const subjOk = data.subjects.map((s) => s.toLowerCase().includes(f));
    const laneName = data.lanes.map((l) => l.name.toLowerCase().includes(f));
    const ok = new Uint8Array(N);
    const laneOk = laneName.map((v) => v);
    for (let i = 0; i < N; i++) {
      const pass = laneName[E.lane[i]] || E.subj[i].some((s) => subjOk[s]);
      if (pass) { ok[i] = 1; laneOk[E.lane[i]] = true; }
    }
    for (let i = 0; i < A.event.length; i++) {
      if (ok[A.event[i]]) { laneOk[A.from_lane[i]] = true; laneOk[A.to_lane[i]] = true; }
    }
    state.eventOk = ok;
    state.laneOk = laneOk;
    layout();
  }

  function layout() {
    const rows = [];
    let section = null;
    data.lanes.forEach((lane, i) => {
      if (state.laneOk && !state.laneOk[i]) return;
      if (lane.section !== section) {
        section = lane.section;
        rows.push({ section });
      }
      if (!state.collapsed[section]) rows.push({ lane: i });
    });
    state.rows = rows;
    state.laneRow = new Int32Array(data.lanes.length).fill(-1);
    rows.forEach((r, i) => { if (r.lane !== undefined) state.laneRow[r.lane] = i; });
    clampScroll();
  }

  function clampScroll() {
    const max = Math.max(0, state.rows.length * ROW_H - (height - AXIS_H) + ROW_H);
    state.scroll = Math.min(Math.max(0, state.scroll), max);
  }

  const rowY = (row) => AXIS_H + row * ROW_H - state.scroll;
  const laneY = (lane) => {
    const r = state.laneRow[lane];
    return r < 0 ? null : rowY(r) + ROW_H / 2;
  };

  function resize() {
    const ratio = window.devicePixelRatio || 1;
    width = plot.clientWidth;
    height = plot.clientHeight;
    canvas.width = Math.max(1, Math.floor(width * ratio));
    canvas.height = Math.max(1, Math.floor(height * ratio));
    ctx.setTransform(ratio, 0, 0, ratio, 0, 0);
    clampScroll();
    draw();
  }

  function visibleRows() {
    const first = Math.max(0, Math.floor(state.scroll / ROW_H));
    const last = Math.min(state.rows.length - 1, Math.ceil((state.scroll + height - AXIS_H) / ROW_H));
    return [first, last];
  }

  function drawRows(first, last) {
    for (let r = first; r <= last; r++) {
      const row = state.rows[r];
      const y = rowY(r);
      if (row.section !== undefined) {
        ctx.fillStyle = '#e6e9f0';
        ctx.fillRect(0, y, width, ROW_H);
        ctx.fillStyle = '#2b3245';
        ctx.font = '600 11px system-ui, sans-serif';
        const mark = state.collapsed[row.section] ? '▸ ' : '▾ ';
        ctx.fillText(mark + (SECTION_NAMES[row.section] || row.section), 6, y + 13);
        continue;
      }
      const involved = involvedLanes.has(row.lane);
      ctx.fillStyle = involved ? '#fff6d6' : (r % 2 ? '#f7f8fb' : '#ffffff');
      ctx.fillRect(0, y, width, ROW_H);
    }
  }

  function drawBands(first, last) {
    for (let r = first; r <= last; r++) {
      const lane = state.rows[r].lane;
      if (lane === undefined || !laneBand[lane]) continue;
      const segs = laneBand[lane];
      const y = rowY(r) + 4;
      let i = Math.max(0, lowerBound(segs, state.t0, (s) => s.to));
      for (; i < segs.length && segs[i].from <= state.t1; i++) {
        const s = segs[i];
        if (state.eventOk && !state.eventOk[s.event]) continue;
        const x0 = Math.max(LABEL_W, x(s.from)), x1 = Math.min(width, x(s.to));
        if (x1 < x0) continue;
        ctx.fillStyle = PHASES[s.phase] || '#cccccc';
        ctx.fillRect(x0, y, Math.max(1, x1 - x0), ROW_H - 8);
        if (s.deleting) {
          ctx.fillStyle = 'rgba(120,0,0,0.35)';
          ctx.fillRect(x0, y + ROW_H - 12, Math.max(1, x1 - x0), 4);
        }
        if (x1 - x0 > 70) {
          ctx.fillStyle = '#223';
          ctx.font = '10px system-ui, sans-serif';
          ctx.fillText(s.phase + (s.deleting ? ' (deleting)' : ''), x0 + 3, y + 8);
        }
      }
    }
  }

  function drawArrows() {
    const start = lowerBound(arrowFrom, state.t0 - maxSpan, (v) => v);
    const paths = {};
    let drawn = 0;
    for (let k = start; k < arrowOrder.length && arrowFrom[k] <= state.t1; k++) {
      const i = arrowOrder[k];
      if (A.to_t[i] < state.t0) continue;
      const ev = A.event[i];
      if (state.eventOk && !state.eventOk[ev]) continue;
      const y0 = laneY(A.from_lane[i]), y1 = laneY(A.to_lane[i]);
      if (y0 === null || y1 === null) continue;
      if ((y0 < AXIS_H && y1 < AXIS_H) || (y0 > height && y1 > height)) continue;
      const color = COLORS[data.kinds[E.kind[ev]]];
      const p = paths[color] || (paths[color] = new Path2D());
      const x0 = x(A.from_t[i]), x1 = x(A.to_t[i]);
      p.moveTo(x0, y0);
      p.lineTo(x1, y1);
      const dir = y1 > y0 ? -1 : 1;
      p.moveTo(x1 - 3, y1 + 5 * dir);
      p.lineTo(x1, y1);
      p.lineTo(x1 + 3, y1 + 5 * dir);
      drawn++;
    }
    ctx.save();
    ctx.beginPath();
    ctx.rect(LABEL_W, AXIS_H, width - LABEL_W, height - AXIS_H);
    ctx.clip();
    ctx.globalAlpha = drawn > 3000 ? 0.25 : 0.6;
    ctx.lineWidth = 1;
    for (const color in paths) {
      ctx.strokeStyle = color;
      ctx.stroke(paths[color]);
    }
    ctx.restore();
  }

  function glyph(kind, px, py, r) {
    ctx.beginPath();
    if (kind === KIND['commit']) ctx.rect(px - r, py - r, 2 * r, 2 * r);
    else if (kind === KIND['fault']) { ctx.moveTo(px, py - r - 1); ctx.lineTo(px + r + 1, py + r); ctx.lineTo(px - r - 1, py + r); ctx.closePath(); }
    else if (kind === KIND['github'] || kind === KIND['kubelet'] || kind === KIND['world']) {
      ctx.moveTo(px, py - r - 1); ctx.lineTo(px + r + 1, py); ctx.lineTo(px, py + r + 1); ctx.lineTo(px - r - 1, py); ctx.closePath();
    } else ctx.arc(px, py, r, 0, 2 * Math.PI);
  }

  // `text` cut to `room` pixels in the current font.
  function fit(text, room) {
    if (ctx.measureText(text).width <= room) return text;
    let n = Math.floor(room / 5.5);
    while (n > 4 && ctx.measureText(text.slice(0, n) + '…').width > room) n -= 4;
    return text.slice(0, n) + '…';
  }

  // A lane name that fits the label column: the kind and the end of the name, which tell runners apart.
  function laneLabel(name, room) {
    if (ctx.measureText(name).width <= room) return name;
    const space = name.indexOf(' ');
    const head = space > 0 && space < 20 ? name.slice(0, space + 1) + '…' : '…';
    let tail = name.slice(space + 1);
    while (tail.length > 4 && ctx.measureText(head + tail).width > room) tail = tail.slice(2);
    return head + tail;
  }

  function drawEvents(first, last) {
    ctx.save();
    ctx.beginPath();
    ctx.rect(LABEL_W, AXIS_H, width - LABEL_W, height - AXIS_H);
    ctx.clip();
    ctx.font = '10px system-ui, sans-serif';
    for (let r = first; r <= last; r++) {
      const lane = state.rows[r].lane;
      if (lane === undefined) continue;
      const list = laneEvents[lane];
      const y = rowY(r) + ROW_H / 2;
      let lastX = -10;
      const i0 = lowerBound(list, state.t0, (i) => E.t[i]);
      for (let j = i0; j < list.length && E.t[list[j]] <= state.t1; j++) {
        const i = list[j];
        if (state.eventOk && !state.eventOk[i]) continue;
        const px = x(E.t[i]);
        const special = cited.has(i) || i === state.selected;
        if (px - lastX < 1 && !special) continue;
        lastX = px;
        const kind = E.kind[i];
        ctx.fillStyle = COLORS[data.kinds[kind]];
        glyph(kind, px, y, 3.5);
        ctx.fill();
        const next = j + 1 < list.length ? x(E.t[list[j + 1]]) : width;
        const room = Math.min(next - px - 10, 420);
        if (room > 40) {
          ctx.fillStyle = '#39404f';
          ctx.fillText(fit(E.label[i], room), px + 6, y + 3.5);
        }
      }
    }
    // The events the oracle used, ringed in red; the selected one in black.
    ctx.lineWidth = 2;
    cited.forEach((i) => {
      const y = laneY(E.lane[i]);
      if (y === null || E.t[i] < state.t0 || E.t[i] > state.t1) return;
      if (state.eventOk && !state.eventOk[i]) return;
      ctx.strokeStyle = '#d40000';
      ctx.beginPath();
      ctx.arc(x(E.t[i]), y, 7, 0, 2 * Math.PI);
      ctx.stroke();
    });
    if (state.selected >= 0) {
      const y = laneY(E.lane[state.selected]);
      if (y !== null) {
        ctx.strokeStyle = '#000';
        ctx.beginPath();
        ctx.arc(x(E.t[state.selected]), y, 9, 0, 2 * Math.PI);
        ctx.stroke();
      }
    }
    ctx.restore();
  }

  function drawMarks() {
    ctx.save();
    ctx.beginPath();
    ctx.rect(LABEL_W, 0, width - LABEL_W, height);
    ctx.clip();
    const styles = { fault: '#ef6c00', world: '#1565c0', probe: '#2e7d32' };
    let lastX = -10;
    for (const m of data.marks) {
      if (m.t < state.t0 || m.t > state.t1) continue;
      const px = x(m.t);
      if (px - lastX < 2) continue;
      lastX = px;
      ctx.strokeStyle = styles[m.kind] || '#888';
      ctx.setLineDash([3, 4]);
      ctx.globalAlpha = 0.5;
      ctx.beginPath();
      ctx.moveTo(px, AXIS_H);
      ctx.lineTo(px, height);
      ctx.stroke();
      ctx.globalAlpha = 1;
      ctx.setLineDash([]);
      ctx.fillStyle = styles[m.kind] || '#888';
      ctx.beginPath();
      ctx.moveTo(px - 4, AXIS_H - 8);
      ctx.lineTo(px + 4, AXIS_H - 8);
      ctx.lineTo(px, AXIS_H - 1);
      ctx.fill();
    }
    ctx.restore();
  }

  // The active violation: its window shaded, a red line at its time, its lanes highlighted.
  function drawViolationWindow() {
    const v = data.violations[state.violation];
    if (!v) return false;
    ctx.save();
    ctx.beginPath();
    ctx.rect(LABEL_W, AXIS_H, width - LABEL_W, height - AXIS_H);
    ctx.clip();
    ctx.fillStyle = 'rgba(255, 80, 60, 0.07)';
    ctx.fillRect(x(v.from_ms), AXIS_H, Math.max(2, x(v.to_ms) - x(v.from_ms)), height - AXIS_H);
    ctx.restore();
    return true;
  }

  function drawViolationLine() {
    const v = data.violations[state.violation];
    if (!v || v.at_ms < state.t0 || v.at_ms > state.t1) return false;
    const px = x(v.at_ms);
    ctx.strokeStyle = '#d40000';
    ctx.lineWidth = 2;
    ctx.beginPath();
    ctx.moveTo(px, AXIS_H - 10);
    ctx.lineTo(px, height);
    ctx.stroke();
    ctx.lineWidth = 1;
    ctx.fillStyle = '#d40000';
    ctx.font = '700 11px system-ui, sans-serif';
    const text = '✖ ' + v.oracle + ' at ' + (v.at_ms / 1000).toFixed(3) + ' s';
    const w = ctx.measureText(text).width;
    ctx.fillText(text, Math.min(px + 4, width - w - 4), AXIS_H - 12);
    return true;
  }

  function drawAxis() {
    ctx.fillStyle = '#fbfbfd';
    ctx.fillRect(0, 0, width, AXIS_H);
    const span = state.t1 - state.t0;
    const target = span / Math.max(1, (width - LABEL_W) / 110);
    const steps = [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10000, 20000, 30000, 60000, 120000, 300000, 600000, 1200000, 1800000, 3600000];
    const step = steps.find((s) => s >= target) || 3600000;
    ctx.strokeStyle = '#d5d9e3';
    ctx.fillStyle = '#4a5266';
    ctx.font = '10px system-ui, sans-serif';
    for (let t = Math.ceil(state.t0 / step) * step; t <= state.t1; t += step) {
      const px = x(t);
      ctx.beginPath();
      ctx.moveTo(px, AXIS_H - 6);
      ctx.lineTo(px, height);
      ctx.globalAlpha = 0.35;
      ctx.stroke();
      ctx.globalAlpha = 1;
      ctx.fillText(fmt(t), px + 2, 11);
    }
    ctx.strokeStyle = '#aab1c2';
    ctx.beginPath();
    ctx.moveTo(0, AXIS_H - 0.5);
    ctx.lineTo(width, AXIS_H - 0.5);
    ctx.stroke();
  }

  function drawLabels(first, last) {
    ctx.fillStyle = 'rgba(251,251,253,0.96)';
    ctx.fillRect(0, AXIS_H, LABEL_W, height - AXIS_H);
    ctx.font = '11px system-ui, sans-serif';
    let drawn = 0;
    for (let r = first; r <= last; r++) {
      const row = state.rows[r];
      const y = rowY(r);
      if (y + ROW_H < AXIS_H) continue;
      if (row.section !== undefined) {
        ctx.fillStyle = '#e6e9f0';
        ctx.fillRect(0, y, LABEL_W, ROW_H);
        ctx.fillStyle = '#2b3245';
        ctx.font = '600 11px system-ui, sans-serif';
        ctx.fillText((state.collapsed[row.section] ? '▸ ' : '▾ ') + (SECTION_NAMES[row.section] || row.section), 6, y + 13);
        ctx.font = '11px system-ui, sans-serif';
        continue;
      }
      const involved = involvedLanes.has(row.lane);
      ctx.fillStyle = involved ? '#b3261e' : '#2b3245';
      ctx.font = (involved ? '700 ' : '') + '11px system-ui, sans-serif';
      ctx.fillText(laneLabel(data.lanes[row.lane].name, LABEL_W - 18), 14, y + 13);
      drawn++;
    }
    ctx.strokeStyle = '#aab1c2';
    ctx.beginPath();
    ctx.moveTo(LABEL_W - 0.5, AXIS_H);
    ctx.lineTo(LABEL_W - 0.5, height);
    ctx.stroke();
    return drawn;
  }

  function draw() {
    if (!width || !height) return;
    ctx.clearRect(0, 0, width, height);
    const [first, last] = visibleRows();
    drawRows(first, last);
    drawViolationWindow();
    drawBands(first, last);
    drawArrows();
    drawEvents(first, last);
    drawMarks();
    drawAxis();
    const marked = drawViolationLine();
    const drawnLanes = drawLabels(first, last);
    body.dataset.drawnLanes = String(drawnLanes);
    body.dataset.violationMarked = String(marked);
    body.dataset.window = Math.round(state.t0) + '-' + Math.round(state.t1);
    document.getElementById('status').textContent =
      N + ' events, ' + data.lanes.length + ' lanes; showing ' + fmt(state.t0) + ' – ' + fmt(state.t1) +
      ' · wheel: scroll lanes · ctrl+wheel or +/−: zoom · drag: pan · click: details';
  }

  let pending = false;
  function redraw() {
    if (pending) return;
    pending = true;
    requestAnimationFrame(() => { pending = false; draw(); });
  }

  function zoomAt(px, factor) {
    const t = tAt(Math.max(LABEL_W, px));
    const span = Math.min(end * 1.2, Math.max(5, (state.t1 - state.t0) * factor));
    const frac = (t - state.t0) / (state.t1 - state.t0);
    state.t0 = t - frac * span;
    state.t1 = state.t0 + span;
    redraw();
  }

  function showViolation(index) {
    state.violation = index;
    cited.clear();
    involvedLanes.clear();
    const v = data.violations[index];
    document.querySelectorAll('#violations button').forEach((b, i) => b.classList.toggle('active', i === index));
    if (!v) { redraw(); return; }
    v.cited.forEach((i) => cited.add(i));
    v.lanes.forEach((l) => involvedLanes.add(l));
    const span = Math.max(2000, v.to_ms - v.from_ms);
    state.t0 = v.from_ms - span * 0.15;
    state.t1 = v.to_ms + span * 0.15;
    state.scroll = 0;
    redraw();
  }

  function esc(s) {
    return String(s).replace(/[&<>"]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' }[c]));
  }

  function showDetail(i) {
    state.selected = i;
    const panel = document.getElementById('detail');
    if (i < 0) { panel.innerHTML = '<p class="muted">Click an event for its body.</p>'; redraw(); return; }
    let pretty;
    if (E.body[i] === '') {
      pretty = '(body left out to keep this page small: ' + data.meta.bodies_left_out + ' of them, far from the violation; `arcsim run … --trace FILE` writes every event in full)';
    } else {
      try { pretty = JSON.stringify(JSON.parse(E.body[i]), null, 2); } catch (e) { pretty = E.body[i]; }
    }
    const usedBy = data.violations.filter((v) => v.cited.includes(i)).map((v) => v.oracle);
    const subjects = E.subj[i].map((s) => '<a data-filter="' + esc(data.subjects[s]) + '">' + esc(data.subjects[s]) + '</a>').join(', ');
    panel.innerHTML =
      '<h2>' + esc(E.label[i]) + '</h2>' +
      '<div class="muted">' + (E.t[i] / 1000).toFixed(3) + ' s · ' + esc(data.lanes[E.lane[i]].name) + ' · ' + esc(data.kinds[E.kind[i]]) + ' · seq ' + E.seq[i] + '</div>' +
      (usedBy.length ? '<div class="cited">used by ' + esc(usedBy.join(', ')) + '</div>' : '') +
      (subjects ? '<div>about: ' + subjects + ' <span class="muted">(click to filter)</span></div>' : '') +
      (REQUEST_KINDS.has(E.kind[i]) ? '<div class="muted">The record stamps a request when it is answered (its serving latency comes before), so its arrow is drawn at the answer.</div>' : '') +
      '<pre>' + esc(pretty) + '</pre>';
    panel.querySelectorAll('a[data-filter]').forEach((a) => a.addEventListener('click', () => setFilter(a.dataset.filter)));
    redraw();
  }

  function setFilter(text) {
    state.filter = text;
    document.getElementById('filter').value = text;
    applyFilter();
    redraw();
  }

  function showMark(px) {
    const near = data.marks.filter((m) => Math.abs(x(m.t) - px) < 6);
    if (!near.length) return;
    const panel = document.getElementById('detail');
    state.selected = -1;
    panel.innerHTML = near.map((m) => '<h2>' + esc(m.kind) + ' at ' + (m.t / 1000).toFixed(3) + ' s</h2><pre>' + esc(m.label) + '</pre>').join('');
    redraw();
  }

  function hit(px, py) {
    if (py < AXIS_H) { showMark(px); return; }
    const row = Math.floor((py - AXIS_H + state.scroll) / ROW_H);
    const r = state.rows[row];
    if (!r) return;
    if (r.section !== undefined) {
      state.collapsed[r.section] = !state.collapsed[r.section];
      layout();
      redraw();
      return;
    }
    if (px < LABEL_W) { setFilter(data.lanes[r.lane].name.replace(/^(watch#\d+).*/, '$1')); return; }
    const list = laneEvents[r.lane];
    const t = tAt(px);
    const tol = 6 * (state.t1 - state.t0) / (width - LABEL_W);
    let best = -1, bestD = Infinity;
    for (let j = lowerBound(list, t - tol, (i) => E.t[i]); j < list.length && E.t[list[j]] <= t + tol; j++) {
      const i = list[j];
      if (state.eventOk && !state.eventOk[i]) continue;
      const d = Math.abs(E.t[i] - t);
      if (d < bestD) { best = i; bestD = d; }
    }
    if (best < 0 && laneBand[r.lane]) {
      const seg = laneBand[r.lane].find((s) => s.from <= t && t <= s.to);
      if (seg) best = seg.event;
    }
    showDetail(best);
  }

  let drag = null;
  canvas.addEventListener('mousedown', (e) => { drag = { x: e.offsetX, y: e.offsetY, t0: state.t0, t1: state.t1, scroll: state.scroll, moved: false }; });
  window.addEventListener('mouseup', (e) => {
    if (drag && !drag.moved && e.target === canvas) hit(e.offsetX, e.offsetY);
    drag = null;
  });
  canvas.addEventListener('mousemove', (e) => {
    if (!drag) return;
    const dx = e.offsetX - drag.x, dy = e.offsetY - drag.y;
    if (Math.abs(dx) + Math.abs(dy) > 3) drag.moved = true;
    const dt = (dx / (width - LABEL_W)) * (drag.t1 - drag.t0);
    state.t0 = drag.t0 - dt;
    state.t1 = drag.t1 - dt;
    state.scroll = drag.scroll - dy;
    clampScroll();
    redraw();
  });
  canvas.addEventListener('wheel', (e) => {
    e.preventDefault();
    if (e.ctrlKey || e.metaKey) { zoomAt(e.offsetX, e.deltaY > 0 ? 1.25 : 0.8); return; }
    if (e.deltaX) {
      const dt = (e.deltaX / (width - LABEL_W)) * (state.t1 - state.t0);
      state.t0 += dt; state.t1 += dt;
    }
    state.scroll += e.deltaY;
    clampScroll();
    redraw();
  }, { passive: false });
  window.addEventListener('keydown', (e) => {
    if (e.target.tagName === 'INPUT') return;
    if (e.key === '+' || e.key === '=') zoomAt(width / 2 + LABEL_W / 2, 0.7);
    else if (e.key === '-') zoomAt(width / 2 + LABEL_W / 2, 1.4);
    else if (e.key === 'Escape') showDetail(-1);
  });
  document.getElementById('filter').addEventListener('input', (e) => { state.filter = e.target.value; applyFilter(); redraw(); });
  document.getElementById('fit').addEventListener('click', () => { state.t0 = 0; state.t1 = end; redraw(); });
  document.getElementById('zoom-in').addEventListener('click', () => zoomAt(width / 2 + LABEL_W / 2, 0.6));
  document.getElementById('zoom-out').addEventListener('click', () => zoomAt(width / 2 + LABEL_W / 2, 1.6));
  document.getElementById('to-violation').addEventListener('click', () => showViolation(Math.max(0, state.violation)));
  document.querySelectorAll('#violations button').forEach((b, i) => b.addEventListener('click', () => showViolation(i)));
  const legend = document.getElementById('legend');
  data.kinds.forEach((k) => {
    const s = document.createElement('span');
    s.style.setProperty('--c', COLORS[k]);
    s.textContent = k;
    legend.appendChild(s);
  });
  window.addEventListener('resize', resize);

  // A link can carry a view: #from=MS&to=MS&filter=TEXT&event=INDEX.
  function fromHash() {
    const params = new URLSearchParams(location.hash.slice(1));
    const from = Number(params.get('from')), to = Number(params.get('to'));
    if (params.has('filter')) setFilter(params.get('filter'));
    if (params.has('from') && params.has('to') && to > from) { state.t0 = from; state.t1 = to; }
    const event = Number(params.get('event'));
    if (params.has('event') && event >= 0 && event < N) showDetail(event);
  }

  layout();
  resize();
  showViolation(state.violation);
  showDetail(-1);
  fromHash();
  draw();
  body.dataset.ready = 'true';
})();
