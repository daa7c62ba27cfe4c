// Export sinks (docs/export.md): each sink's delivery as the server sums it over the nodes,
// refreshed every few seconds, with pause and resume, and a sink's newest dead letters on demand.
// Sinks are created, changed, replayed and deleted through the REST API (docs/rest-api.md).

import { api } from './api.js';
import { h, table, time } from './dom.js';

const EVERY_MS = 5000;
const DEAD_LETTERS = 50;

export function sinksPage(main) {
  const rows = h('tbody', { id: 'sink-rows' });
  const empty = h('p', { class: 'hint', role: 'status' });
  const error = h('p', { class: 'error', role: 'alert' });
  const letters = deadLettersCard();
  let left = false;

  async function load() {
    try {
      const sinks = await api('GET', '/api/fieldline/sinks');
      if (left) {
        return;
      }
      sinks.sort((a, b) => a.name.localeCompare(b.name));
      rows.replaceChildren(...sinks.map(row));
      empty.textContent = sinks.length ? '' : 'No sinks. Create one with POST /api/fieldline/sinks (see the REST API).';
      error.textContent = '';
    } catch (e) {
      error.textContent = e.message;
    }
  }

  function row(sink) {
    const status = sink.status;
    const action = sink.paused ? 'resume' : 'pause';
    return h('tr', { 'data-id': sink.id },
      h('td', {}, sink.name),
      h('td', {}, sink.type),
      h('td', {}, h('span', { class: 'state', 'data-state': status.state }, status.state)),
      h('td', { class: 'count' }, count(status.delivered)),
      h('td', { class: 'count' }, count(status.lagRecords)),
      h('td', { class: 'count' }, (status.lagMs / 1000).toFixed(1)),
      h('td', { class: 'last-error' }, status.lastError
        ? [status.lastError, h('div', { class: 'hint' }, time(status.lastErrorTime))]
        : '–'),
      h('td', { class: 'actions' },
        h('button', { type: 'button', class: 'small', name: action, onclick: () => change(sink, action) },
          sink.paused ? 'Resume' : 'Pause'),
        h('button', { type: 'button', class: 'small', name: 'dead-letters', onclick: () => letters.show(sink) },
          'Dead letters')));
  }

  async function change(sink, action) {
    try {
      await api('POST', `/api/fieldline/sinks/${sink.id}/${action}`);
      await load();
    } catch (e) {
      error.textContent = e.message;
    }
  }

  main.append(
    h('section', { class: 'card' },
      h('h1', {}, 'Sinks'),
      h('p', { class: 'hint' }, `Delivery to Kafka and webhooks, summed over the nodes, refreshed every ${EVERY_MS / 1000} s.`),
      error,
      table(['Name', 'Type', 'State', 'Delivered', 'Lag (records)', 'Lag (s)', 'Last error', ''], rows),
      empty),
    letters.element);
  load();
  const timer = setInterval(load, EVERY_MS);
  return () => {
    left = true;
    clearInterval(timer);
  };
}

/** The dead letters of one sink at a time, newest first: hidden until a sink's button is used. */
function deadLettersCard() {
  const title = h('h2', {});
  const rows = h('tbody', { id: 'sink-dead-letter-rows' });
  const message = h('p', { class: 'hint', role: 'status' });
  let sink = null;

  async function load() {
    const shown = sink;
    rows.replaceChildren();
    message.textContent = 'Loading…';
    try {
      const letters = await api('GET', `/api/fieldline/sinks/${shown.id}/deadLetters?limit=${DEAD_LETTERS}`);
      if (shown !== sink) {
        return; // another sink was chosen meanwhile
      }
      message.textContent = letters.length ? '' : 'None.';
      rows.replaceChildren(...letters.map((letter) => h('tr', {},
        h('td', {}, time(letter.createdTime)),
        h('td', { class: 'count' }, count(letter.records)),
        h('td', {}, letter.status ? String(letter.status) : '–'),
        h('td', {}, letter.error),
        h('td', { class: 'value' }, h('details', {}, h('summary', {}, `${letter.body.length} characters`), h('pre', {}, letter.body))))));
    } catch (e) {
      message.textContent = e.message;
    }
  }

  const element = h('section', { class: 'card', id: 'sink-dead-letters', hidden: true },
    title,
    h('div', { class: 'row-buttons' },
      h('button', { type: 'button', class: 'small', id: 'sink-dead-letters-refresh', onclick: load }, 'Refresh'),
      h('button', { type: 'button', class: 'small', onclick: () => { sink = null; element.hidden = true; } }, 'Close')),
    h('p', { class: 'hint' }, `Batches the receiver refused for good, the newest ${DEAD_LETTERS}.`),
    message,
    table(['Refused', 'Records', 'Status', 'Error', 'Batch'], rows));

  return {
    element,
    show(chosen) {
      sink = chosen;
      title.textContent = `Dead letters of ${chosen.name}`;
      element.hidden = false;
      load();
      element.scrollIntoView({ block: 'nearest' });
    },
  };
}

function count(n) {
  return Number(n).toLocaleString();
}
