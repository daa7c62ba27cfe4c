// A live chart of one key over the last N minutes or hours: the WebSocket subscription sends the
// window's history first, then every new value; points older than the window fall off.

import uPlot from '/console/lib/uPlot.esm.js';
import { field, h } from './dom.js';
import { subscribe } from './live.js';

const MINUTE = 60_000;
const WINDOWS = [['5 minutes', 5 * MINUTE], ['15 minutes', 15 * MINUTE], ['1 hour', 60 * MINUTE],
  ['6 hours', 360 * MINUTE], ['24 hours', 1440 * MINUTE]];
const HEIGHT = 240;

export function chartSection(id, keys, stops) {
  const keySelect = h('select', { name: 'chart-key', onchange: restart });
  const windowSelect = h('select', { name: 'chart-window', onchange: restart },
    WINDOWS.map(([label, ms]) => h('option', { value: ms }, label)));
  const box = h('div', { class: 'chart', id: 'chart' });
  let points = new Map(); // ts -> number
  let plot = null;
  let unsubscribe = null;

  function restart() {
    unsubscribe?.();
    plot?.destroy();
    plot = null;
    unsubscribe = null;
    points = new Map();
    const key = keySelect.value;
    const windowMs = Number(windowSelect.value);
    if (!key) {
      return;
    }
    unsubscribe = subscribe(
      () => ({ type: 'TIMESERIES', entityType: 'DEVICE', entityId: id, keys: key, startTs: Date.now() - windowMs,
        timeWindow: windowMs, interval: 1000, limit: 10000, agg: 'NONE' }),
      (update) => {
        for (const [ts, value] of update.data?.[key] ?? []) {
          const number = Number(value);
          if (value !== '' && Number.isFinite(number)) {
            points.set(ts, number);
          }
        }
        draw();
      });
    draw();
  }

  function draw() {
    const windowMs = Number(windowSelect.value);
    const since = Date.now() - windowMs;
    for (const ts of points.keys()) {
      if (ts < since) {
        points.delete(ts);
      }
    }
    const times = [...points.keys()].sort((a, b) => a - b);
    const data = [times.map((ts) => ts / 1000), times.map((ts) => points.get(ts))];
    if (plot) {
      plot.setData(data);
    } else {
      plot = new uPlot({
        width: box.clientWidth || 320,
        height: HEIGHT,
        scales: { x: { time: true, range: () => [(Date.now() - windowMs) / 1000, Date.now() / 1000] } },
        series: [{}, { label: keySelect.value, stroke: '#1f5f8b', width: 2, points: { size: 5 } }],
      }, data, box);
    }
  }

  keys.onNew((key) => {
    keySelect.append(h('option', { value: key }, key));
    if (!unsubscribe) {
      keySelect.value = key;
      restart();
    }
  });
  const slide = setInterval(() => plot && draw(), 5000); // the window moves on without new values
  const resize = new ResizeObserver(() => plot?.setSize({ width: box.clientWidth, height: HEIGHT }));
  resize.observe(box);
  stops.push(() => {
    unsubscribe?.();
    clearInterval(slide);
    resize.disconnect();
    plot?.destroy();
  });

  return h('section', { class: 'card' },
    h('h2', {}, 'Chart'),
    h('div', { class: 'row' }, field('Key', keySelect), field('Window', windowSelect)),
    box);
}
