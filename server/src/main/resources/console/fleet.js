// The fleet at a glance, from this node's Prometheus metrics (GET /metrics), sampled every few
// seconds: rates and latencies are the change between two samples divided by the time between.

import { h } from './dom.js';

const EVERY_MS = 2000;

export function fleetPage(main) {
  const figures = {
    connections: figure('fleet-connections', 'Connected devices', 'MQTT connections open on this node'),
    messages: figure('fleet-messages', 'Messages / s', 'PUBLISH packets received'),
    latency: figure('fleet-latency', 'PUBACK latency', 'mean over the last interval (p99 below)'),
    storage: figure('fleet-storage', 'Storage writes waiting', 'queued for Cassandra + waiting for a batch'),
    actors: figure('fleet-actors', 'Active device actors', 'devices with recent traffic'),
    failures: figure('fleet-failures', 'Write failures / s', 'writes Cassandra refused or timed out'),
  };
  const error = h('p', { class: 'error', role: 'alert' });
  let previous = null;

  async function sample() {
    try {
      const text = await fetch('/metrics').then((response) => response.text());
      const now = { at: performance.now(), metrics: parse(text) };
      show(now, previous);
      previous = now;
      error.textContent = '';
    } catch (e) {
      error.textContent = `Cannot read /metrics: ${e.message}`;
    }
  }

  function show(now, before) {
    const m = now.metrics;
    figures.connections.set(total(m, 'fieldline_mqtt_connections'));
    figures.actors.set(total(m, 'fieldline_device_actors_active'));
    figures.storage.set(total(m, 'fieldline_store_writes_queued') + total(m, 'fieldline_store_writes_pending'),
      `${total(m, 'fieldline_store_writes_inflight')} in flight`);
    if (!before) {
      return; // rates need two samples
    }
    const seconds = (now.at - before.at) / 1000;
    const change = (name) => total(m, name) - total(before.metrics, name);
    figures.messages.set((change('fieldline_mqtt_publish_received_total') / seconds).toFixed(1));
    figures.failures.set((change('fieldline_store_write_failures_total') / seconds).toFixed(1));
    const acks = change('fieldline_mqtt_ack_latency_seconds_count');
    if (acks > 0) {
      const meanMs = (change('fieldline_mqtt_ack_latency_seconds_sum') / acks) * 1000;
      const p99 = quantile(m, before.metrics, 'fieldline_mqtt_ack_latency_seconds_bucket', 0.99);
      figures.latency.set(`${meanMs.toFixed(1)} ms`,
        Number.isFinite(p99) ? `p99 ≤ ${(p99 * 1000).toFixed(1)} ms` : 'p99 above the largest bucket');
    } else {
      figures.latency.set('–', 'no acknowledgements in the last interval');
    }
  }

  main.append(
    h('section', { class: 'card' },
      h('h1', {}, 'Fleet'),
      h('p', { class: 'hint' }, `This node, sampled every ${EVERY_MS / 1000} s.`),
      error,
      h('div', { class: 'figures' }, Object.values(figures).map((f) => f.element))));
  sample();
  const timer = setInterval(sample, EVERY_MS);
  return () => clearInterval(timer);
}

/** A big number with a caption; set(value, detail) updates it. */
function figure(id, title, caption) {
  const value = h('div', { class: 'number' }, '–');
  const detail = h('div', { class: 'hint' }, caption);
  return {
    element: h('div', { class: 'figure', id }, h('div', { class: 'title' }, title), value, detail),
    set: (text, more) => {
      value.textContent = String(text);
      detail.textContent = more ?? caption;
    },
  };
}

/** Prometheus text format: one { name, labels, value } per sample line. */
function parse(text) {
  const samples = [];
  for (const line of text.split('\n')) {
    const match = line.match(/^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)/);
    if (match) {
      samples.push({ name: match[1], labels: match[2] ?? '', value: Number(match[3]) });
    }
  }
  return samples;
}

/** The sum of a metric's samples over all its labels (0 when absent). */
function total(samples, name) {
  return samples.filter((s) => s.name === name).reduce((sum, s) => sum + s.value, 0);
}

/**
 * The upper bound of the histogram bucket holding quantile q of the observations made between
 * two samples (buckets are cumulative: le="x" counts every observation ≤ x).
 */
function quantile(now, before, name, q) {
  const counts = new Map();
  for (const [samples, sign] of [[now, 1], [before, -1]]) {
    for (const s of samples.filter((sample) => sample.name === name)) {
      const le = s.labels.match(/le="([^"]+)"/)?.[1];
      if (le) {
        counts.set(le, (counts.get(le) ?? 0) + sign * s.value);
      }
    }
  }
  const buckets = [...counts].map(([le, count]) => [le === '+Inf' ? Infinity : Number(le), count]).sort((a, b) => a[0] - b[0]);
  const wanted = q * (buckets.at(-1)?.[1] ?? 0);
  return buckets.find(([, count]) => count >= wanted)?.[0] ?? NaN;
}
