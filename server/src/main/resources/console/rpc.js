// A two-way RPC call to the device: the answer it sends back, or the error status (408 when it
// did not answer in time).

import { api } from './api.js';
import { field, h } from './dom.js';

export function rpcSection(id) {
  const method = h('input', { name: 'rpc-method', required: true, maxlength: 255, placeholder: 'getTemperature' });
  const params = h('textarea', { name: 'rpc-params', rows: 2 }, '{}');
  const timeout = h('input', { name: 'rpc-timeout', type: 'number', min: 100, max: 55000, value: 5000 });
  const button = h('button', { type: 'submit' }, 'Send');
  const answer = h('pre', { id: 'rpc-answer', class: 'answer' });

  async function send(event) {
    event.preventDefault();
    let parsed;
    try {
      parsed = JSON.parse(params.value || '{}');
    } catch {
      answer.textContent = 'Parameters are not valid JSON.';
      return;
    }
    button.disabled = true;
    answer.textContent = 'Waiting for the device…';
    try {
      const reply = await api('POST', `/api/plugins/rpc/twoway/${id}`,
        { method: method.value, params: parsed, timeout: Number(timeout.value) });
      answer.textContent = JSON.stringify(reply, null, 2);
    } catch (e) {
      answer.textContent = `Error ${e.message}`;
    } finally {
      button.disabled = false;
    }
  }

  return h('section', { class: 'card' },
    h('h2', {}, 'RPC'),
    h('p', { class: 'hint' }, 'The device must subscribe to v1/devices/me/rpc/request/+ and answer on v1/devices/me/rpc/response/{n}.'),
    h('form', { class: 'row', onsubmit: send },
      field('Method', method), field('Parameters (JSON)', params), field('Timeout (ms)', timeout), button),
    answer);
}
