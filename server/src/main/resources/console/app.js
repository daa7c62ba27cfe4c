// The console's entry point: a hash router. Each page is a function (main element, ...route
// parameters) that fills the page and returns its clean-up (unsubscribe, stop timers), called
// when the user leaves it. Every page but the login form needs the token.

import { logout, token } from './api.js';
import { onStatus } from './live.js';
import { loginPage } from './login.js';
import { devicesPage } from './devices.js';
import { devicePage } from './device.js';
import { fleetPage } from './fleet.js';
import { sinksPage } from './sinks.js';

const main = document.getElementById('main');
const nav = document.getElementById('nav');
const liveStatus = document.getElementById('live-status');

let returnTo = '#/devices'; // where the login form leads
let cleanUp = null;

const routes = [
  [/^#\/login$/, () => loginPage(main, () => { location.hash = returnTo; })],
  [/^#\/devices$/, () => devicesPage(main)],
  [/^#\/device\/([0-9a-fA-F-]{36})$/, (id) => devicePage(main, id)],
  [/^#\/fleet$/, () => fleetPage(main)],
  [/^#\/sinks$/, () => sinksPage(main)],
];

function route() {
  cleanUp?.();
  cleanUp = null;
  const hash = location.hash || '#/devices';
  if (hash !== '#/login' && !token()) {
    returnTo = hash;
    location.replace('#/login'); // fires hashchange again
    return;
  }
  nav.hidden = hash === '#/login';
  for (const [pattern, page] of routes) {
    const match = hash.match(pattern);
    if (match) {
      if (hash !== '#/login') {
        returnTo = hash; // back here after logging in again (an expired token)
      }
      main.replaceChildren();
      cleanUp = page(...match.slice(1)) ?? null;
      return;
    }
  }
  location.replace('#/devices');
}

document.getElementById('logout').addEventListener('click', logout);
onStatus((status) => {
  liveStatus.textContent = status;
  liveStatus.dataset.status = status;
});
window.addEventListener('hashchange', route);
route();
