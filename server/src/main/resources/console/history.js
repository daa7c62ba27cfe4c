// Stored values of one key over a past range, raw or aggregated in buckets (REST, read on demand).

import { api } from './api.js';
import { field, h, show, table, time } from './dom.js';

const HOUR = 3_600_000;
const RANGES = [['Last hour', HOUR], ['Last 6 hours', 6 * HOUR], ['Last 24 hours', 24 * HOUR],
  ['Last 7 days', 168 * HOUR], ['Last 30 days', 720 * HOUR]];
const INTERVALS = [['1 minute', 60_000], ['5 minutes', 300_000], ['15 minutes', 900_000],
  ['1 hour', HOUR], ['1 day', 24 * HOUR]];
const AGGREGATIONS = ['NONE', 'AVG', 'MIN', 'MAX', 'SUM', 'COUNT'];

export function historySection(id, keys) {
  const keyList = h('datalist', { id: 'history-keys' });
  const key = h('input', { name: 'history-key', list: 'history-keys', required: true });
  const range = h('select', { name: 'history-range' }, RANGES.map(([label, ms]) => h('option', { value: ms }, label)));
  const agg = h('select', { name: 'history-agg', onchange: () => { interval.disabled = agg.value === 'NONE'; } },
    AGGREGATIONS.map((name) => h('option', {}, name)));
  const interval = h('select', { name: 'history-interval', disabled: true },
    INTERVALS.map(([label, ms]) => h('option', { value: ms }, label)));
  const limit = h('input', { name: 'history-limit', type: 'number', min: 1, max: 10000, value: 100 });
  const rows = h('tbody', { id: 'history-rows' });
  const message = h('p', { class: 'hint', role: 'status' });

  keys.onNew((name) => {
    keyList.append(h('option', { value: name }));
    key.value ||= name;
  });

  async function load(event) {
    event.preventDefault();
    const endTs = Date.now();
    const query = new URLSearchParams({ keys: key.value, startTs: endTs - Number(range.value), endTs, agg: agg.value, limit: limit.value });
    if (agg.value !== 'NONE') {
      query.set('interval', interval.value);
    }
    try {
      const answer = await api('GET', `/api/plugins/telemetry/DEVICE/${id}/values/timeseries?${query}`);
      const points = (answer?.[key.value] ?? []).sort((a, b) => b.ts - a.ts);
      rows.replaceChildren(...points.map((point) => h('tr', {}, h('td', {}, time(point.ts)), h('td', {}, show(point.value)))));
      message.textContent = `${points.length} values` + (agg.value === 'NONE' ? '' : ', each stamped with its bucket\'s middle');
    } catch (e) {
      message.textContent = e.message;
    }
  }

  return h('section', { class: 'card' },
    h('h2', {}, 'History'),
    h('form', { class: 'row', onsubmit: load },
      field('Key', key), keyList, field('Range', range), field('Aggregation', agg), field('Interval', interval),
      field('Limit', limit), h('button', { type: 'submit' }, 'Load')),
    message,
    table(['Time', 'Value'], rows));
}
