// The device's attributes in ThingsBoard's three scopes. Client attributes are the device's own
// (read-only here); shared and server attributes can be set from a JSON object and deleted.
// Each scope is read over REST and kept current by a WebSocket subscription.

import { api } from './api.js';
import { h, show, table, time } from './dom.js';
import { subscribe } from './live.js';

const SCOPES = [
  ['CLIENT_SCOPE', 'Client attributes', 'Sent by the device on v1/devices/me/attributes.'],
  ['SHARED_SCOPE', 'Shared attributes', 'Set here, pushed to the device.'],
  ['SERVER_SCOPE', 'Server attributes', 'Set here, never seen by the device.'],
];

export function attributesSection(id, stops) {
  return h('section', { class: 'card', id: 'attributes' },
    h('h2', {}, 'Attributes'),
    SCOPES.map(([scope, title, about]) => scopeBlock(id, scope, title, about, stops)));
}

function scopeBlock(id, scope, title, about, stops) {
  const base = `/api/plugins/telemetry/DEVICE/${id}`;
  const editable = scope !== 'CLIENT_SCOPE';
  const attributes = new Map(); // key -> { value, ts }
  const rows = h('tbody');
  const message = h('p', { class: 'hint', role: 'status' });

  function render() {
    rows.replaceChildren(...[...attributes.keys()].sort().map((key) => h('tr', {},
      h('td', {}, key),
      h('td', { class: 'value' }, show(attributes.get(key).value)),
      h('td', {}, time(attributes.get(key).ts)),
      editable ? h('td', {}, h('button', { type: 'button', class: 'small', onclick: () => remove(key) }, 'Delete')) : null)));
  }

  async function reload() {
    try {
      const list = await api('GET', `${base}/values/attributes/${scope}`);
      attributes.clear();
      list.forEach((a) => attributes.set(a.key, { value: a.value, ts: a.lastUpdateTs }));
      render();
    } catch (e) {
      message.textContent = e.message;
    }
  }

  async function remove(key) {
    try {
      await api('DELETE', `${base}/${scope}?keys=${encodeURIComponent(key)}`);
      reload();
    } catch (e) {
      message.textContent = e.message;
    }
  }

  const json = h('textarea', { name: `attributes-${scope}`, rows: 3, placeholder: '{"targetTemperature": 21.5, "mode": "eco"}' });
  async function save(event) {
    event.preventDefault();
    let body;
    try {
      body = JSON.parse(json.value);
    } catch {
      message.textContent = 'Not valid JSON: write an object such as {"mode": "eco"}.';
      return;
    }
    try {
      await api('POST', `${base}/attributes/${scope}`, body);
      message.textContent = 'Saved.';
      json.value = '';
      reload();
    } catch (e) {
      message.textContent = e.message;
    }
  }

  reload();
  stops.push(subscribe(
    () => ({ type: 'ATTRIBUTES', entityType: 'DEVICE', entityId: id, scope }),
    (update) => {
      for (const [key, points] of Object.entries(update.data ?? {})) {
        points.forEach(([ts, value]) => attributes.set(key, { value, ts }));
      }
      render();
    }));

  return h('div', { class: 'scope', id: scope },
    h('h3', {}, title), h('p', { class: 'hint' }, about),
    table(editable ? ['Key', 'Value', 'Updated', ''] : ['Key', 'Value', 'Updated'], rows),
    editable ? h('form', { class: 'row', onsubmit: save }, json, h('button', { type: 'submit' }, 'Save')) : null,
    message);
}
