// The login form: POST /api/auth/login, then onLoggedIn().

import { login } from './api.js';
import { field, h } from './dom.js';

export function loginPage(main, onLoggedIn) {
  const username = h('input', { name: 'username', autocomplete: 'username', required: true });
  const password = h('input', { name: 'password', type: 'password', autocomplete: 'current-password', required: true });
  const error = h('p', { class: 'error', role: 'alert' });
  const button = h('button', { type: 'submit' }, 'Sign in');

  async function submit(event) {
    event.preventDefault();
    button.disabled = true;
    error.textContent = '';
    try {
      await login(username.value, password.value);
      onLoggedIn();
    } catch (e) {
      error.textContent = e.message;
    } finally {
      button.disabled = false;
    }
  }

  main.append(
    h('form', { id: 'login-form', class: 'card narrow', onsubmit: submit },
      h('h1', {}, 'Sign in'),
      field('User name', username),
      field('Password', password),
      button,
      error));
  username.focus();
}
