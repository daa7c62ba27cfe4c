// Building the page without HTML strings: everything shown goes through text nodes, so a device
// name or payload can never turn into markup.

/**
 * h('tag', {attribute: value, onclick: fn}, ...children) creates an element. Children are
 * elements, strings (added as text) or arrays of them; null and undefined are skipped. The
 * attributes object may be left out.
 */
export function h(tag, attributes, ...children) {
  const element = document.createElement(tag);
  if (attributes instanceof Node || typeof attributes !== 'object' || Array.isArray(attributes)) {
    children.unshift(attributes);
  } else if (attributes) {
    for (const [name, value] of Object.entries(attributes)) {
      if (name.startsWith('on')) {
        element.addEventListener(name.slice(2), value);
      } else if (value === true) {
        element.setAttribute(name, '');
      } else if (value !== false && value != null) {
        element.setAttribute(name, value);
      }
    }
  }
  element.append(...children.flat().filter((child) => child != null));
  return element;
}

/** A table in a horizontally scrolling box (narrow screens), with a header row. */
export function table(headers, body) {
  return h('div', { class: 'scroll' },
    h('table', {}, h('thead', {}, h('tr', {}, headers.map((name) => h('th', {}, name)))), body));
}

/** Epoch milliseconds as local date and time. */
export function time(ts) {
  return new Date(ts).toLocaleString();
}

/** An attribute or telemetry value as text: strings as they are, anything else as JSON. */
export function show(value) {
  return typeof value === 'string' ? value : JSON.stringify(value);
}

/** A form field: its label above the control. */
export function field(label, control) {
  return h('label', {}, h('span', {}, label), control);
}
