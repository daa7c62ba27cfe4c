// The device list: pages of 20, a search by name, and a form that creates a device and shows how
// it connects.

import { api } from './api.js';
import { connectionHelp } from './connect.js';
import { field, h, table, time } from './dom.js';

const PAGE_SIZE = 20;

export function devicesPage(main) {
  let page = 0;
  let searchTimer = null;

  const search = h('input', { type: 'search', name: 'search', placeholder: 'Search by name', oninput: () => {
    clearTimeout(searchTimer);
    searchTimer = setTimeout(() => { page = 0; load(); }, 300);
  } });
  const rows = h('tbody', { id: 'device-rows' });
  const summary = h('span', { class: 'hint' });
  const previous = h('button', { type: 'button', onclick: () => { page--; load(); } }, '‹ Prev');
  const next = h('button', { type: 'button', onclick: () => { page++; load(); } }, 'Next ›');
  const listError = h('p', { class: 'error', role: 'alert' });

  const name = h('input', { name: 'name', required: true, maxlength: 255 });
  const type = h('input', { name: 'type', value: 'default', required: true, maxlength: 255 });
  const created = h('div', { id: 'created' });
  const createError = h('p', { class: 'error', role: 'alert' });

  async function load() {
    const query = new URLSearchParams({ pageSize: PAGE_SIZE, page });
    if (search.value.trim()) {
      query.set('textSearch', search.value.trim());
    }
    try {
      const result = await api('GET', '/api/tenant/devices?' + query);
      rows.replaceChildren(...result.data.map((device) => h('tr', {},
        h('td', {}, h('a', { href: '#/device/' + device.id.id }, device.name)),
        h('td', {}, device.type),
        h('td', {}, time(device.createdTime)))));
      summary.textContent = `${result.totalElements} devices · page ${page + 1}/${Math.max(result.totalPages, 1)}`;
      previous.disabled = page === 0;
      next.disabled = !result.hasNext;
      listError.textContent = '';
    } catch (e) {
      listError.textContent = e.message;
    }
  }

  async function create(event) {
    event.preventDefault();
    createError.textContent = '';
    try {
      const device = await api('POST', '/api/device', { name: name.value.trim(), type: type.value.trim() });
      created.replaceChildren(
        h('h3', {}, 'Created ', h('a', { href: '#/device/' + device.id.id }, device.name)),
        await connectionHelp(device.id.id));
      name.value = '';
      load();
    } catch (e) {
      createError.textContent = e.message;
    }
  }

  main.append(
    h('section', { class: 'card' },
      h('h1', {}, 'Devices'),
      search,
      listError,
      table(['Name', 'Type', 'Created'], rows),
      h('div', { class: 'pager' }, previous, summary, next)),
    h('section', { class: 'card' },
      h('h2', {}, 'New device'),
      h('form', { id: 'create-form', class: 'row', onsubmit: create },
        field('Name', name), field('Type', type), h('button', { type: 'submit' }, 'Create')),
      createError,
      created));
  load();
  return () => clearTimeout(searchTimer);
}
