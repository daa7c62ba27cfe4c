// Live data over ThingsBoard's WebSocket API (/api/ws). One socket serves every subscription of
// the page: it opens with the first subscription, authenticates in its first message (the token
// never goes in the URL), and closes when the last subscription ends. When the socket drops it
// reconnects with a growing delay (1 s doubling to 30 s) and subscribes everything again. The
// server closes a session that sent nothing for 90 s, so an empty command goes every 30 s.

import { logout, token } from './api.js';

const UNAUTHORIZED = 3;
const KEEP_ALIVE_MS = 30000;

const subscriptions = new Map(); // cmdId -> { command, onUpdate }
let socket = null;
let nextCmdId = 1;
let retryDelay = 1000;
let retryTimer = null;
let statusListener = () => {};
let keepAlive = null;

/**
 * Subscribes; command() builds the command without its cmdId, e.g.
 * { type: 'TIMESERIES', entityType: 'DEVICE', entityId, scope: 'LATEST_TELEMETRY' }. It is called
 * again on every reconnect, so a time window can start from "now". onUpdate receives each
 * update ({ subscriptionId, errorCode, errorMsg, data: { key: [[ts, "value"], ...] } }), the
 * first carrying the current values. Returns the function that unsubscribes.
 */
export function subscribe(command, onUpdate) {
  const cmdId = nextCmdId++;
  subscriptions.set(cmdId, { command, onUpdate });
  if (socket?.readyState === WebSocket.OPEN) {
    socket.send(JSON.stringify({ cmds: [{ ...command(), cmdId }] }));
  } else {
    connect();
  }
  return () => {
    if (!subscriptions.delete(cmdId)) {
      return;
    }
    if (socket?.readyState === WebSocket.OPEN) {
      socket.send(JSON.stringify({ cmds: [{ ...command(), cmdId, unsubscribe: true }] }));
    }
    if (subscriptions.size === 0) {
      disconnect();
    }
  };
}

/**
 * Calls listener('live' | 'connecting' | 'reconnecting' | 'idle') whenever the socket's state
 * changes; 'idle' means no page needs it.
 */
export function onStatus(listener) {
  statusListener = listener;
}

function connect() {
  if (socket || retryTimer) {
    return;
  }
  statusListener('connecting');
  const scheme = location.protocol === 'https:' ? 'wss://' : 'ws://';
  const ws = new WebSocket(scheme + location.host + '/api/ws');
  socket = ws;
  ws.onopen = () => {
    const cmds = [...subscriptions].map(([cmdId, s]) => ({ ...s.command(), cmdId }));
    ws.send(JSON.stringify({ authCmd: { cmdId: 0, token: token() }, cmds }));
    clearInterval(keepAlive);
    keepAlive = setInterval(() => {
      if (ws.readyState === WebSocket.OPEN) {
        ws.send('{"cmds":[]}');
      }
    }, KEEP_ALIVE_MS);
  };
  ws.onmessage = (event) => {
    const update = JSON.parse(event.data);
    if (update.errorCode === UNAUTHORIZED) {
      logout(); // the server closes the socket; the pages' clean-up unsubscribes everything
      return;
    }
    retryDelay = 1000;
    statusListener('live');
    subscriptions.get(update.subscriptionId)?.onUpdate(update);
  };
  ws.onclose = () => {
    clearInterval(keepAlive);
    socket = null;
    if (subscriptions.size === 0 || !token()) {
      statusListener('idle');
      return;
    }
    statusListener('reconnecting');
    retryTimer = setTimeout(() => {
      retryTimer = null;
      connect();
    }, retryDelay);
    retryDelay = Math.min(retryDelay * 2, 30000);
  };
}

function disconnect() {
  clearInterval(keepAlive);
  clearTimeout(retryTimer);
  retryTimer = null;
  if (socket) {
    socket.onclose = null;
    socket.close();
    socket = null;
  }
  statusListener('idle');
}
