// The Atoll dashboard: polls /api/dashboard every second and redraws. No framework; Chart.js
// (served by the manager from its own jar) draws the two time series.
(function () {
  'use strict';

  const POLL_MS = 1000;
  const colours = [];
  function colour(i) {
    while (colours.length <= i) {
      const n = colours.length;
      colours.push('hsl(' + Math.round((n * 137.508) % 360) + ', 62%, ' + (n % 2 ? 48 : 58) + '%)');
    }
    return colours[i];
  }

  function el(tag, attrs, text) {
    const e = document.createElement(tag);
    for (const k in (attrs || {})) e.setAttribute(k, attrs[k]);
    if (text !== undefined) e.textContent = text;
    return e;
  }

  function lineChart(canvasId, datasets) {
    if (typeof Chart === 'undefined') return null;
    return new Chart(document.getElementById(canvasId), {
      type: 'line',
      data: { labels: [], datasets: datasets.map(d => ({ label: d.label, data: [], borderColor: d.colour,
        backgroundColor: d.colour, pointRadius: 0, borderWidth: 2, tension: 0.2 })) },
      options: { animation: false, responsive: true, maintainAspectRatio: false,
        scales: { y: { beginAtZero: true } }, plugins: { legend: { display: datasets.length > 1 } } }
    });
  }

  const traffic = lineChart('traffic', [
    { label: 'sent', colour: '#1f5fbf' }, { label: 'handled', colour: '#1b7f3b' }, { label: 'failed', colour: '#b3261e' }]);
  const latency = lineChart('latency', [{ label: 'ask ms', colour: '#8a4fbf' }]);

  function time(ms) {
    return new Date(ms).toLocaleTimeString([], { hour12: false });
  }

  function renderPods(state) {
    const body = document.querySelector('#pods tbody');
    body.replaceChildren();
    const max = Math.max(1, ...state.pods.map(p => p.shards));
    state.pods.forEach((p, i) => {
      const tr = el('tr', { 'class': 'pod', 'data-id': p.id });
      const sw = el('td'); sw.appendChild(el('span', { 'class': 'swatch', style: 'background:' + colour(i) }));
      tr.appendChild(sw);
      tr.appendChild(el('td', { 'class': 'pod-id' }, p.id));
      tr.appendChild(el('td', {}, p.version));
      tr.appendChild(el('td', { 'class': 'num pod-shards' }, String(p.shards)));
      const bar = el('td');
      bar.appendChild(el('div', { 'class': 'bar', style: 'background:' + colour(i) + ';width:' + (100 * p.shards / max) + '%' }));
      tr.appendChild(bar);
      body.appendChild(tr);
    });
    document.getElementById('pod-count').textContent = state.pods.length + ' active';
  }

  function renderShards(state) {
    const c = document.getElementById('shard-map');
    const owners = state.owners || [];
    const n = owners.length;
    const width = c.parentElement.clientWidth - 4 || 600;
    const cell = Math.max(3, Math.min(18, Math.floor(Math.sqrt(width * 160 / Math.max(1, n)))));
    const perRow = Math.max(1, Math.floor(width / cell));
    c.width = perRow * cell;
    c.height = Math.ceil(n / perRow) * cell;
    const g = c.getContext('2d');
    g.clearRect(0, 0, c.width, c.height);
    owners.forEach((o, s) => {
      g.fillStyle = o < 0 ? '#d9dce1' : colour(o);
      g.fillRect((s % perRow) * cell, Math.floor(s / perRow) * cell, cell - 1, cell - 1);
    });
  }

  function renderEvents(state) {
    const list = document.getElementById('events');
    list.replaceChildren();
    state.events.slice().reverse().forEach(e => {
      const li = el('li', { 'class': e.kind });
      li.appendChild(el('span', { 'class': 'time' }, time(e.at)));
      li.appendChild(document.createTextNode(e.text));
      list.appendChild(li);
    });
  }

  function renderCharts(state) {
    document.getElementById('reporters').textContent = state.reporters;
    const labels = state.traffic.map(p => time(p.at));
    if (traffic) {
      traffic.data.labels = labels;
      traffic.data.datasets[0].data = state.traffic.map(p => p.sent);
      traffic.data.datasets[1].data = state.traffic.map(p => p.handled);
      traffic.data.datasets[2].data = state.traffic.map(p => p.failed);
      traffic.update();
    }
    if (latency) {
      latency.data.labels = labels;
      latency.data.datasets[0].data = state.traffic.map(p => p.askMillis);
      latency.update();
    }
  }

  function render(state) {
    const last = state.traffic.length ? state.traffic[state.traffic.length - 1] : null;
    document.getElementById('summary').textContent = 'manager ' + state.leader + ' · term ' + state.term
      + ' · epoch ' + state.epoch + ' · ' + state.pods.length + ' pods · ' + state.shards + ' shards'
      + (state.unowned ? ' (' + state.unowned + ' unowned)' : '')
      + (last ? ' · ' + Math.round(last.handled) + ' msg/s' : '');
    renderPods(state);
    renderShards(state);
    renderEvents(state);
    renderCharts(state);
  }

  const status = document.getElementById('status');
  async function poll() {
    try {
      const r = await fetch('/api/dashboard', { cache: 'no-store' });
      if (!r.ok) throw new Error('HTTP ' + r.status);
      render(await r.json());
      status.textContent = 'updated ' + time(Date.now());
      status.className = 'status';
      document.body.dataset.updates = String(Number(document.body.dataset.updates || 0) + 1);
    } catch (e) {
      status.textContent = 'cannot reach the manager: ' + e.message;
      status.className = 'status stale';
    } finally {
      setTimeout(poll, POLL_MS);
    }
  }
  poll();
})();
