// One device: how it connects, its latest values (live), a live chart, history, attributes, RPC
// and dead letters. Each section below is built by its own module.

import { api } from './api.js';
import { connectionHelp } from './connect.js';
import { h, show, table, time } from './dom.js';
import { subscribe } from './live.js';
import { chartSection } from './chart.js';
import { historySection } from './history.js';
import { attributesSection } from './attributes.js';
import { rpcSection } from './rpc.js';
import { deadLettersSection } from './deadletters.js';

export function devicePage(main, id) {
  const stops = []; // each section's clean-up
  const keys = telemetryKeys();
  const title = h('h1', {}, 'Device');
  const about = h('p', { class: 'hint' }, id);
  const connect = h('details', {}, h('summary', {}, 'Connect this device'));

  api('GET', '/api/device/' + id).then((device) => {
    title.textContent = device.name;
    about.textContent = `${device.type} · created ${time(device.createdTime)} · id ${id}`;
  }).catch((e) => { about.textContent = e.message; });
  connectionHelp(id).then((help) => connect.append(help)).catch((e) => connect.append(e.message));
  api('GET', `/api/plugins/telemetry/DEVICE/${id}/keys/timeseries`)
    .then((list) => list.forEach(keys.add)).catch(() => {});

  main.append(
    h('section', { class: 'card' }, title, about, connect),
    latestSection(id, keys, stops),
    chartSection(id, keys, stops),
    historySection(id, keys),
    attributesSection(id, stops),
    rpcSection(id),
    deadLettersSection(id));
  return () => stops.forEach((stop) => stop());
}

/** The device's time-series keys: add(key) records one, onNew(listener) hears of each new one. */
function telemetryKeys() {
  const known = new Set();
  const listeners = [];
  return {
    add: (key) => {
      if (!known.has(key)) {
        known.add(key);
        listeners.forEach((listener) => listener(key));
      }
    },
    onNew: (listener) => {
      listeners.push(listener);
      known.forEach(listener);
    },
  };
}

/** The newest value of every key: read once over REST, then kept current by the WebSocket. */
function latestSection(id, keys, stops) {
  const latest = new Map(); // key -> { ts, value }
  const rows = h('tbody', { id: 'latest-rows' });
  const note = h('p', { class: 'hint' }, 'No values yet: publish one with the line under "Connect this device".');

  function merge(key, ts, value) {
    if (!(latest.get(key)?.ts > ts)) {
      latest.set(key, { ts, value });
      keys.add(key);
    }
  }

  function render() {
    note.hidden = latest.size > 0;
    rows.replaceChildren(...[...latest.keys()].sort().map((key) => h('tr', { 'data-key': key },
      h('td', {}, key),
      h('td', { class: 'value' }, show(latest.get(key).value)),
      h('td', {}, time(latest.get(key).ts)))));
  }

  api('GET', `/api/plugins/telemetry/DEVICE/${id}/values/timeseries`).then((answer) => {
    for (const [key, points] of Object.entries(answer ?? {})) {
      points.forEach((point) => merge(key, point.ts, point.value));
    }
    render();
  }).catch((e) => { note.textContent = e.message; });

  stops.push(subscribe(
    () => ({ type: 'TIMESERIES', entityType: 'DEVICE', entityId: id, scope: 'LATEST_TELEMETRY' }),
    (update) => {
      if (update.errorCode) {
        note.textContent = update.errorMsg;
        note.hidden = false;
        return;
      }
      for (const [key, points] of Object.entries(update.data ?? {})) {
        points.forEach(([ts, value]) => merge(key, ts, value));
      }
      render();
    }));

  return h('section', { class: 'card', id: 'latest' },
    h('h2', {}, 'Latest values'), note, table(['Key', 'Value', 'Time'], rows));
}
