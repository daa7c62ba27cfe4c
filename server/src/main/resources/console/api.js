// The session and the REST calls. The token lives in sessionStorage (gone when the tab closes)
// and travels only in the X-Authorization header, never in a URL.

const TOKEN = 'fieldline.token';
const REFRESH_TOKEN = 'fieldline.refreshToken';

export function token() {
  return sessionStorage.getItem(TOKEN);
}

/** POST /api/auth/login; keeps the token pair for this tab. */
export async function login(username, password) {
  const response = await fetch('/api/auth/login', {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ username, password }),
  });
  const body = await parse(response);
  if (!response.ok) {
    throw new ApiError(response.status, response.status === 401 ? 'Wrong user name or password' : message(body, response));
  }
  sessionStorage.setItem(TOKEN, body.token);
  sessionStorage.setItem(REFRESH_TOKEN, body.refreshToken);
}

/** Forgets the tokens and shows the login form. */
export function logout() {
  sessionStorage.removeItem(TOKEN);
  sessionStorage.removeItem(REFRESH_TOKEN);
  location.hash = '#/login';
}

/** An answer other than 2xx: its status and the server's message. */
export class ApiError extends Error {
  constructor(status, text) {
    super(text);
    this.status = status;
  }
}

/**
 * Calls the REST API with the token: api('GET', '/api/device/' + id) or api('POST', path, body).
 * Resolves with the parsed JSON answer (null for an empty one); a 401 logs out.
 */
export async function api(method, path, body) {
  const headers = { 'X-Authorization': 'Bearer ' + token() };
  if (body !== undefined) {
    headers['Content-Type'] = 'application/json';
  }
  const response = await fetch(path, {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const answer = await parse(response);
  if (response.status === 401) {
    logout();
  }
  if (!response.ok) {
    throw new ApiError(response.status, message(answer, response));
  }
  return answer;
}

async function parse(response) {
  const text = await response.text();
  if (!text) {
    return null;
  }
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

function message(body, response) {
  return `${response.status} ${body?.message ?? response.statusText}`;
}
