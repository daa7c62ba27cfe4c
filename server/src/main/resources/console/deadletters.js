// Messages of the device that were acknowledged but not stored (unparsable payloads, unknown
// topics), newest first.

import { api } from './api.js';
import { h, table, time } from './dom.js';

export function deadLettersSection(id) {
  const rows = h('tbody', { id: 'dead-letter-rows' });
  const message = h('p', { class: 'hint', role: 'status' });

  async function load() {
    try {
      const letters = await api('GET', `/api/fieldline/deadletters/DEVICE/${id}?limit=50`);
      message.textContent = letters.length ? '' : 'None.';
      rows.replaceChildren(...letters.map((letter) => h('tr', {},
        h('td', {}, time(letter.receivedAt)),
        h('td', {}, letter.topic),
        h('td', {}, letter.reason),
        h('td', { class: 'value' }, letter.payloadText ?? `base64: ${letter.payloadBase64}`))));
    } catch (e) {
      message.textContent = e.message;
    }
  }

  load();
  return h('section', { class: 'card' },
    h('h2', {}, 'Dead letters ', h('button', { type: 'button', id: 'dead-letters-refresh', class: 'small', onclick: load }, 'Refresh')),
    message,
    table(['Received', 'Topic', 'Reason', 'Payload'], rows));
}
